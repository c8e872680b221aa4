"""The live supervisor: watching, leader election and monitors (see docs/supervisor.md)."""

from core.supervisor.capsule_drift import CapsuleDrift
from core.supervisor.context_monitor import ContextMonitor
from core.supervisor.monitors import Monitor, StaleRuns
from core.supervisor.returns_retention import ReturnsRetention
from core.supervisor.supervisor import Supervisor

__all__ = [
    "CapsuleDrift",
    "ContextMonitor",
    "Monitor",
    "ReturnsRetention",
    "StaleRuns",
    "Supervisor",
]
