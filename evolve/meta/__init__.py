"""The self-improvement step: choose a problem, diagnose it, let the agent modify itself, validate."""

from evolve.meta.diagnose import DiagnosisFailed, Instructions, diagnose, parse_instructions
from evolve.meta.modify import Modification, self_modify
from evolve.meta.problems import Failure, Problem, choose_problem, read_failure
from evolve.meta.validate import Verdict, validate_child

__all__ = [
    "DiagnosisFailed",
    "Failure",
    "Instructions",
    "Modification",
    "Problem",
    "Verdict",
    "choose_problem",
    "diagnose",
    "parse_instructions",
    "read_failure",
    "self_modify",
    "validate_child",
]
