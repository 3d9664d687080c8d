# %% [markdown]
# # The result log in a notebook
#
# A plain PySpark 4 session reads the gateway's result log with `format("motebase")`:
# no registration, no motebase import. Run the cells in order (Jupyter, VS Code and
# PyCharm read `# %%` as cells) or the whole file with `python docs/spark_example.py`.
# tests/test_spark_example.py runs it against a small log.
#
# The log is the directory `mote query ... --log DIR` (or `mote run`) writes; set
# MOTEBASE_LOG or edit LOG_DIR. If `format("motebase")` is not found, Spark's workers
# run another Python than this one: see "Which Python its workers run" in spark/README.md.

# %%
import os

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

LOG_DIR = os.environ.get("MOTEBASE_LOG", "results/")

# Two shuffle partitions, not Spark's 200: a streaming aggregate keeps a state store per
# partition and runs a task for each in every batch. On two cores this file took 52 s on
# 20 readings with 200, and 36 s with 2.
spark = (
    SparkSession.builder.master("local[2]")
    .appName("motebase-notebook")
    .config("spark.sql.shuffle.partitions", "2")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("WARN")

# %% [markdown]
# ## Batch: the log as it is now
# One row per node and epoch; a column per attribute the logged queries select.

# %%
readings = spark.read.format("motebase").load(LOG_DIR)
print(f"{readings.count()} readings, columns: {', '.join(readings.columns)}")


# %%
def per_node(frame):
    """Readings, mean light and last epoch of each node (batch or stream alike)."""
    return frame.groupBy("node_id").agg(
        F.count("*").alias("readings"),
        F.round(F.avg("light"), 1).alias("avg_light"),
        F.max("epoch").alias("last_epoch"),
    )


per_node(readings).orderBy("node_id").show()

# %% [markdown]
# ## Stream: the same aggregate, kept up to date as the gateway logs
# `availableNow` reads what is in the log and stops, so this cell ends. To follow a live
# gateway, use `.trigger(processingTime="5 seconds")`, rerun the `show` cell to watch it
# grow, and `query.stop()` when done.

# %%
stream = spark.readStream.format("motebase").option("path", LOG_DIR).load()
query = (
    per_node(stream)
    .writeStream.outputMode("complete")
    .format("memory")
    .queryName("per_node")
    .trigger(availableNow=True)
    .start()
)
query.awaitTermination()

# %%
spark.table("per_node").orderBy("node_id").show()
