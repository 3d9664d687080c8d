"""Spark schemas of the result log's tables, derived from the log's own query records.

The gateway logs a ``query`` record (its selected fields with their catalog wire types)
before any result of that query, so the ``readings`` columns are never hand-listed: they
are whatever the queries in the log selected, typed by :data:`SPARK_TYPE_OF_WIRE_TYPE`.

Both tables start with ``log_offset``, the record's offset in the log: the key that
makes "every logged result exactly once" checkable downstream.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.types import (
    BinaryType,
    ByteType,
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from motebase.gateway.protocol.result import WireType

TABLES = ("readings", "aggregates")

#: Catalog wire type (QueryField code) -> the narrowest Spark type holding every value.
#: Unsigned types widen by one step; TinyDB TIMESTAMP is a 32-bit mote clock, not unix time.
SPARK_TYPE_OF_WIRE_TYPE: Mapping[int, DataType] = {
    WireType.INTONE: ByteType(),
    WireType.UINTONE: ShortType(),
    WireType.INTTWO: ShortType(),
    WireType.UINTTWO: IntegerType(),
    WireType.INTFOUR: IntegerType(),
    WireType.UINTFOUR: LongType(),
    WireType.TIMESTAMP: LongType(),
    WireType.STRING: StringType(),
    WireType.BYTES: BinaryType(),
}

READING_COLUMNS = StructType(
    [
        StructField("log_offset", LongType(), False),
        StructField("query_id", IntegerType(), False),
        StructField("epoch", IntegerType(), False),
        StructField("node_id", IntegerType(), False),
        StructField("epoch_time", TimestampType(), False),
        StructField("receive_time", TimestampType(), False),
    ]
)

AGGREGATES_SCHEMA = StructType(
    [
        StructField("log_offset", LongType(), False),
        StructField("query_id", IntegerType(), False),
        StructField("epoch", IntegerType(), False),
        StructField("group", LongType(), True),
        StructField("aggregate", StringType(), False),
        StructField("attribute", StringType(), True),
        StructField("value", DoubleType(), True),
        StructField("partial", BinaryType(), True),
        StructField("epoch_time", TimestampType(), False),
        StructField("receive_time", TimestampType(), False),
    ]
)


class SchemaError(ValueError):
    """The log's query records do not give one consistent schema."""


@dataclass(frozen=True)
class Attribute:
    """A selected attribute: a ``readings`` column named after it, typed by its wire type."""

    name: str
    wire_type: int

    @property
    def spark_type(self) -> DataType:
        try:
            return SPARK_TYPE_OF_WIRE_TYPE[self.wire_type]
        except KeyError:
            message = f"attribute {self.name!r}: unknown wire type {self.wire_type}"
            raise SchemaError(message) from None


def selected_attributes(
    query_records: Iterable[Mapping[str, Any]], query_id: int | None = None
) -> list[Attribute]:
    """Attributes of one query, or the union over all queries in first-selected order.

    An attribute selected by two queries must have one wire type (there is one catalog).
    """
    by_name: dict[str, Attribute] = {}
    for query in query_records:
        if query_id is not None and query["query_id"] != query_id:
            continue
        for field in query["fields"]:
            attribute = Attribute(field["name"], int(field["type"]))
            known = by_name.setdefault(attribute.name.lower(), attribute)
            if known.wire_type != attribute.wire_type:
                raise SchemaError(
                    f"attribute {attribute.name!r} has wire types {known.wire_type} and "
                    f"{attribute.wire_type} in different queries"
                )
    return list(by_name.values())


def readings_schema(attributes: Iterable[Attribute]) -> StructType:
    fixed = {name.lower() for name in READING_COLUMNS.fieldNames()}
    fields = list(READING_COLUMNS.fields)
    for attribute in attributes:
        if attribute.name.lower() in fixed:
            raise SchemaError(f"attribute {attribute.name!r} collides with a readings column")
        fields.append(StructField(attribute.name, attribute.spark_type, True))
    return StructType(fields)


#: The Arrow type of each Spark type a table's column can have: readers hand Spark Arrow
#: batches of these (spark/source.py). Kept here, beside the Spark types, rather than
#: taken from pyspark's converter, whose signature changes between 4.x releases.
ARROW_TYPE_OF_SPARK_TYPE: Mapping[type[DataType], pa.DataType] = {
    ByteType: pa.int8(),
    ShortType: pa.int16(),
    IntegerType: pa.int32(),
    LongType: pa.int64(),
    DoubleType: pa.float64(),
    StringType: pa.string(),
    BinaryType: pa.binary(),
    TimestampType: pa.timestamp("us", tz="UTC"),
}


def arrow_schema(schema: StructType) -> pa.Schema:
    """``schema`` as Arrow: same names, order and nullability."""
    return pa.schema(
        [
            pa.field(f.name, ARROW_TYPE_OF_SPARK_TYPE[type(f.dataType)], nullable=f.nullable)
            for f in schema.fields
        ]
    )
