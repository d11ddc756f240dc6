"""device: moving, casting, copying, memory and gradient ops, new tensordicts and
conversions to Python data (``spec/device.yaml``). On top of the leaf-wise keys
(``codegen/leafwise.py``): ``device: rule(args)`` (the result's device), ``target`` (a
parameter naming the key whose leaves the op works on), ``then`` (a method of self
called last), ``shortcut`` (a method of self tried after the rule: a result other than
None is returned as is) and ``method: false`` (no method: only ``torch.X(td)`` reaches
it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from codegen import leafwise
from codegen.entry import Entry
from codegen.families import register
from codegen.model import Form, Role
from codegen.rules import DEVICE_RULES, RuleCall, parse_rule_call


@register
@dataclass(frozen=True, kw_only=True)
class DeviceOp(leafwise.LeafwiseOp):
    family: ClassVar[str] = "device"
    KEYS: ClassVar[frozenset] = leafwise.KEYS | {
        "device", "target", "then", "shortcut", "method", "writes_back"
    }

    device_rule: RuleCall | None  # ``device: to(args, kwargs)``: the result's device
    then: str | None  # a method of self called last; its result is returned
    shortcut: str | None  # a method of self called with the rule's names, tried first
    # a helper of ``_ops`` given (self, result) last: what ``with td.op(...) as r:``
    # writes back into self on exit
    writes_back: str | None = None

    @classmethod
    def parse(cls, entry: Entry) -> DeviceOp | None:
        sig = entry.signature()  # the device rule's names are the leaf's too
        rule = parse_rule_call(entry, "device", DEVICE_RULES, sig) if entry.has("device") else None
        then = entry.value("then")
        if then is not None and not (isinstance(then, str) and then.isidentifier()):
            entry.err(entry.line_of("then"), f"'then' must be a method name, got {then!r}")
        shortcut = entry.value("shortcut")
        if shortcut is not None:
            if not (isinstance(shortcut, str) and shortcut.isidentifier()):
                entry.err(entry.line_of("shortcut"),
                          f"'shortcut' must be a method name, got {shortcut!r}")
            elif rule is None or not {"device", "dtype", "non_blocking"} <= set(rule.rule.defines):
                entry.err(entry.line_of("shortcut"),
                          "'shortcut' needs a device rule that defines device, dtype "
                          "and non_blocking")
        writes_back = entry.value("writes_back")
        if writes_back is not None and not (
            isinstance(writes_back, str) and writes_back.isidentifier()
        ):
            entry.err(entry.line_of("writes_back"),
                      f"'writes_back' must be an _ops helper name, got {writes_back!r}")
        form = Form.METHOD if entry.flag("method", True) else Form.FUNCTION
        target = entry.parameter("target", sig)
        fields = cls.parse_leafwise(entry, rule.rule.defines if rule else (), form=form)
        if fields is None:
            return None
        if target:
            fields["signature"] = fields["signature"].with_roles({target: Role.TARGET})
        return cls(
            **fields, device_rule=rule, then=then, shortcut=shortcut, writes_back=writes_back
        )

    @property
    def lazy_way(self) -> str:
        if self.signature.role(Role.TARGET):
            return "each"  # a key of every stacked tensordict
        return super().lazy_way

    @property
    def rule_names(self) -> tuple[str, ...]:
        return super().rule_names + (self.device_rule.rule.defines if self.device_rule else ())

    def doc_facts(self) -> list[str]:
        return [f"Device: {self.device_rule.rule.doc}."] if self.device_rule else []

