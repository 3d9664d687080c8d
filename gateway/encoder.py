"""QueryPlan -> AM 101 QueryMessages, in the order and shape the TinyDB Java tools send.

Order (wire format §6.3): one FIELD part per field, one EXPR part per expression, a BUFFER
part for an OUTPUT ACTION, an N_EPOCHS part for a FOR clause. Every message repeats the
common header (numFields, numExprs, bufferType, hasForClause, epochDuration). Byte
layouts come from motebase.gateway.protocol; this module only fills in values.
"""

from __future__ import annotations

from typing import Any

from motebase.gateway.plan.model import PlanAggregate, PlanExpression, PlanSelection, QueryPlan
from motebase.gateway.protocol import build_query_message
from motebase.gateway.protocol.query import (
    NO_GROUPING,
    BufferType,
    ExprOpType,
    MsgType,
    QueryPart,
)

#: Java's abortMessage TTL.
ABORT_TTL = 3
MAX_QID = 254  # 0xFF is the motes' "no query"


def encode_query(plan: QueryPlan, qid: int) -> list[bytes]:
    """The 40-byte QueryMessage payloads of ``plan`` as query ``qid``, in send order."""
    _check_qid(qid)
    header = _header(plan, qid)
    messages = [
        {
            **header,
            "type": QueryPart.FIELD,
            "idx": f.index,
            "u": {"name": f.name, "op": 0, "type": f.wire_type},
        }
        for f in plan.fields
    ]
    messages += [
        {**header, "type": QueryPart.EXPR, "idx": e.expr_idx, "u": _expression(e)}
        for e in plan.expressions
    ]
    if plan.output_action is not None:
        action = plan.output_action
        # The tools' setOutputCommand(String, short) sends the parameter with hasParam 0.
        messages.append(
            {
                **header,
                "type": QueryPart.BUFFER,
                "idx": 0,
                "u": {"name": action.command, "hasParam": False, "param": action.param or 0},
            }
        )
    if plan.num_epochs is not None:
        messages.append(
            {**header, "type": QueryPart.N_EPOCHS, "idx": 0, "u": {"numEpochs": plan.num_epochs}}
        )
    return [build_query_message(m) for m in messages]


def encode_stop(qid: int) -> bytes:
    """The DEL message that stops query ``qid`` (the tools send it 5 times, 200 ms apart)."""
    _check_qid(qid)
    return build_query_message(
        {"qid": qid, "msgType": MsgType.DEL, "epochDuration": 0, "u": {"ttl": ABORT_TTL}}
    )


def encode_rate_change(qid: int, epoch_units: int) -> bytes:
    """The RATE message that sets query ``qid``'s epoch to ``epoch_units`` x 10 ms."""
    _check_qid(qid)
    return build_query_message(
        {
            "qid": qid,
            "msgType": MsgType.RATE,
            "epochDuration": epoch_units,
            "u": {"name": "", "op": 0, "type": 0},
        }
    )


def _header(plan: QueryPlan, qid: int) -> dict[str, Any]:
    buffer_type = BufferType.COMMAND if plan.output_action else BufferType.RADIO
    return {
        "qid": qid,
        "msgType": MsgType.ADD,
        "numFields": len(plan.fields),
        "numExprs": len(plan.expressions),
        "flags": {
            "bufferType": buffer_type,
            "hasForClause": plan.num_epochs is not None,
            "hasEvent": False,
            "fromCatalogBuffer": False,
        },
        "epochDuration": plan.epoch_units,
    }


def _expression(expr: PlanExpression) -> dict[str, Any]:
    if isinstance(expr, PlanSelection):
        op_type = ExprOpType.SEL
        ex: dict[str, Any] = {"field": expr.field_index, "op": expr.op_code, "value": expr.value}
    else:
        op_type = ExprOpType.TEMP_AGG if expr.temporal else ExprOpType.AGG
        ex = _aggregate(expr)
    return {
        "opFlags": {"opType": op_type, "isStringExp": False, "success": False},
        "idx": 0,  # the tools leave it 0; motes overwrite it with the position
        "ex": ex,
        "fieldOp": expr.arith.op_code,
        "fieldConst": expr.arith.const,
        "opState": 0,
    }


def _aggregate(expr: PlanAggregate) -> dict[str, Any]:
    group = expr.group
    ex: dict[str, Any] = {
        "field": expr.field_index,
        "groupingField": group.field_index if group else NO_GROUPING,
        "groupFieldOp": group.arith.op_code if group else 0,
        "groupFieldConst": group.arith.const if group else 0,
        "op": expr.op_id,
    }
    if expr.temporal:
        ex["args"] = [*expr.args, 0, 0, 0, 0][:4]
    return ex


def _check_qid(qid: int) -> None:
    if not 0 <= qid <= MAX_QID:
        raise ValueError(f"query id {qid} is outside 0..{MAX_QID}")
