"""PySpark streaming ingestion of the gateway's durable result log."""
