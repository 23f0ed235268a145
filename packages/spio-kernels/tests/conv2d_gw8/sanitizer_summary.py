"""Reading compute-sanitizer's summary line: whether a tool found nothing."""

from __future__ import annotations

import re

#: memcheck and synccheck end with "ERROR SUMMARY: N errors"; racecheck with "RACECHECK
#: SUMMARY: N hazards displayed (E errors, W warnings)", where warnings count too.
_ERRORS = re.compile(r"ERROR SUMMARY: (\d+) error")
_HAZARDS = re.compile(
    r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)"
)


def summary_is_clean(tool: str, output: str) -> bool:
    """Whether output (the sanitizer's and the program's) holds tool's summary and it
    reports no error, hazard or warning; False where the summary is missing."""
    if tool == "racecheck":
        found = _HAZARDS.findall(output)
        return bool(found) and all(int(v) == 0 for match in found for v in match)
    found = _ERRORS.findall(output)
    return bool(found) and all(int(count) == 0 for count in found)
