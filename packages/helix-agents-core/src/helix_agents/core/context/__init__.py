"""Context strategies: the pure rules (strategy, budget, boundary, summaries, tool catalog)
and the values and protocol of the context store every backend implements.

See docs/context-strategies.md for the design and the rules CS-1 … CS-16.
"""

from .agent_tools import (
    activate_tool_source,
    error_text,
    offload_output,
    read_tool_output,
    recall_history,
)
from .boundary import Boundary, find_compaction_boundary, is_protected
from .budget import (
    Budget,
    BudgetLevel,
    EstimateCounter,
    TiktokenCounter,
    TokenCounter,
    Usage,
    default_counter,
)
from .disclosure import Disclosure
from .errors import InvalidPatternError, OutputNotFoundError, UnknownToolSourceError
from .history import (
    MAX_HISTORY_LIMIT,
    HistoryQuery,
    check_compaction,
    compaction_result,
    row_text,
    row_tool_names,
    search_result,
    search_rows,
    summary_row,
)
from .literals import required_literal, safe_literal
from .models import (
    Compaction,
    CompactionResult,
    ContextWindow,
    HistoryHit,
    HistorySearch,
    OutputLine,
    OutputRef,
    OutputSlice,
)
from .outputs import (
    DEFAULT_MAX_CHARS,
    MAX_OUTPUT_BYTES,
    check_output_args,
    check_read_args,
    describe_output,
    grep_lines,
    new_output_id,
    offload_summary,
    read_lines,
    split_lines,
)
from .patterns import MAX_PATTERN_CHARS, compile_pattern
from .protocol import ContextStore
from .strategy import (
    STRATEGIES,
    ContextStrategy,
    StrategyFeatures,
    features,
    resolve_strategy,
)
from .tools import ACTIVATE_TOOL, SourceKind, ToolCatalog, ToolSource

__all__ = [
    "ACTIVATE_TOOL",
    "DEFAULT_MAX_CHARS",
    "MAX_HISTORY_LIMIT",
    "MAX_OUTPUT_BYTES",
    "MAX_PATTERN_CHARS",
    "STRATEGIES",
    "Boundary",
    "Budget",
    "BudgetLevel",
    "Compaction",
    "CompactionResult",
    "ContextStore",
    "ContextStrategy",
    "ContextWindow",
    "Disclosure",
    "EstimateCounter",
    "HistoryHit",
    "HistoryQuery",
    "HistorySearch",
    "InvalidPatternError",
    "OutputLine",
    "OutputNotFoundError",
    "OutputRef",
    "OutputSlice",
    "SourceKind",
    "StrategyFeatures",
    "TiktokenCounter",
    "TokenCounter",
    "ToolCatalog",
    "ToolSource",
    "UnknownToolSourceError",
    "Usage",
    "activate_tool_source",
    "check_compaction",
    "check_output_args",
    "check_read_args",
    "compaction_result",
    "compile_pattern",
    "default_counter",
    "describe_output",
    "error_text",
    "features",
    "find_compaction_boundary",
    "grep_lines",
    "is_protected",
    "new_output_id",
    "offload_output",
    "offload_summary",
    "read_lines",
    "read_tool_output",
    "recall_history",
    "required_literal",
    "resolve_strategy",
    "row_text",
    "row_tool_names",
    "safe_literal",
    "search_result",
    "search_rows",
    "split_lines",
    "summary_row",
]
