"""The program-level memory limit (``memory_limit=``): a search over the splitter's plans.

* :mod:`~exla.memory_limit.search` — the search: the plans exla's models
  prefer, confirmed by XLA's compile, or plans measured with XLA one by one;
* :mod:`~exla.memory_limit.model_plans` — the C++ plan search judged by
  exla's models; its results are the C++ records (``PlanSearchResult``,
  ``PlanCandidate``, ``PlanSettings``), bound read-only;
* :mod:`~exla.memory_limit.limit_plan` — what the search found
  (:class:`LimitPlan`, one :class:`Candidate` per plan), as a report prints it;
* :mod:`~exla.memory_limit.floor` — the program's floor (arguments,
  outputs and what no rule splits, by name), as a report prints it;
* :mod:`~exla.memory_limit.messages` — the lines and the warning the user
  reads, printed from the splitter's records;
* :mod:`~exla.memory_limit.planner` — whose compile gives XLA's figures: the
  backend that runs the program;
* :mod:`~exla.memory_limit.runtime_memory` — what the process holds besides
  the plan: the framework's runtime, measured once per process.

The frontends and :func:`exla.optimize_hlo` use it; it uses neither frontend.
"""

from exla import _core
from exla.memory_limit.limit_plan import Candidate as Candidate
from exla.memory_limit.limit_plan import LimitPlan as LimitPlan
from exla.memory_limit.model_plans import KEEP_WHOLE as KEEP_WHOLE
from exla.memory_limit.planner import Planner as Planner
from exla.memory_limit.runtime_memory import RuntimeCost as RuntimeCost

__all__ = ["Candidate", "LimitPlan", "KEEP_WHOLE", "PlanCandidate", "PlanSearchResult",
           "PlanSettings", "Planner", "RuntimeCost"]

# The C++ plan search's records, loaded with the extension on first use.
__getattr__ = _core.records("PlanCandidate", "PlanSearchResult", "PlanSettings")
