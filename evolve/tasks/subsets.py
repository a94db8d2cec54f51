"""The task subsets DGM and HGM evaluate on, by name (instance ids as listed in the public DGM repository,
github.com/jennyzzt/dgm: `swe_bench/subsets/*.json`, `polyglot/subsets/*.json`).

DGM's staged evaluation runs `small` first, then `medium` (disjoint from it); `big` is its further
SWE-bench Verified set.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

SWEBENCH_SUBSETS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "small": (
        "django__django-10973", "django__django-11066", "django__django-12754", "django__django-15930",
        "django__django-13279", "django__django-16661", "django__django-13346", "django__django-10880",
        "django__django-10999", "django__django-11087",
    ),
    "medium": (
        "django__django-11790", "django__django-12050", "django__django-12262", "django__django-12713",
        "sphinx-doc__sphinx-8475", "sphinx-doc__sphinx-8721", "sphinx-doc__sphinx-9320",
        "sphinx-doc__sphinx-9698", "django__django-11848", "django__django-12774",
        "sphinx-doc__sphinx-7748", "sphinx-doc__sphinx-8035", "sphinx-doc__sphinx-8548",
        "sphinx-doc__sphinx-9229", "django__django-11880", "django__django-12143", "django__django-12155",
        "sphinx-doc__sphinx-9367", "django__django-12209", "django__django-11951", "django__django-12193",
        "django__django-12276", "django__django-12304", "django__django-9296", "sphinx-doc__sphinx-10466",
        "django__django-11999", "django__django-12039", "django__django-12273", "django__django-12325",
        "django__django-12406", "sphinx-doc__sphinx-10673", "sphinx-doc__sphinx-11510",
        "sphinx-doc__sphinx-7757", "sphinx-doc__sphinx-8265", "sphinx-doc__sphinx-8551",
        "sphinx-doc__sphinx-8638", "django__django-11815", "django__django-11885", "django__django-12708",
        "sphinx-doc__sphinx-7590", "sphinx-doc__sphinx-7985", "sphinx-doc__sphinx-8056",
        "sphinx-doc__sphinx-9461", "django__django-11964", "django__django-12308",
        "sphinx-doc__sphinx-10449", "sphinx-doc__sphinx-7454", "sphinx-doc__sphinx-8269",
        "sphinx-doc__sphinx-9230", "sphinx-doc__sphinx-9281",
    ),
    "big": (
        "astropy__astropy-12907", "astropy__astropy-13033", "astropy__astropy-13236",
        "astropy__astropy-13398", "astropy__astropy-13453", "astropy__astropy-13579",
        "astropy__astropy-13977", "astropy__astropy-14096", "astropy__astropy-14182",
        "astropy__astropy-14309", "astropy__astropy-14365", "astropy__astropy-14369",
        "astropy__astropy-14508", "astropy__astropy-14539", "astropy__astropy-14598",
        "astropy__astropy-14995", "astropy__astropy-7166", "astropy__astropy-7336",
        "astropy__astropy-7606", "astropy__astropy-7671", "astropy__astropy-8707", "astropy__astropy-8872",
        "django__django-10097", "django__django-10554", "django__django-10914", "django__django-11095",
        "django__django-11099", "django__django-11119", "django__django-11133", "django__django-11138",
        "django__django-11141", "django__django-11149", "django__django-11163", "django__django-11179",
        "django__django-11206", "django__django-11211", "django__django-11239", "django__django-11265",
        "django__django-11276", "django__django-11292", "django__django-11299", "django__django-11333",
        "django__django-11400", "django__django-11433", "django__django-11451", "django__django-11477",
        "django__django-11490", "django__django-11532", "django__django-11551", "django__django-11555",
        "django__django-11603", "django__django-11728", "django__django-11734", "django__django-11740",
        "django__django-11749", "django__django-11820", "django__django-12125", "django__django-12419",
        "django__django-12663", "django__django-12741", "django__django-12858", "django__django-12965",
        "django__django-13012", "django__django-13023", "django__django-13028", "django__django-13033",
        "django__django-13089", "django__django-13109", "django__django-13112", "django__django-13121",
        "django__django-13128", "django__django-13158", "django__django-13195", "django__django-13212",
        "django__django-13297", "django__django-13315", "django__django-13343", "django__django-13344",
        "django__django-13363", "django__django-13401", "django__django-13406", "django__django-13410",
        "django__django-13417", "django__django-13449", "django__django-13512", "django__django-13513",
        "django__django-13516", "django__django-13551", "django__django-13568", "django__django-13569",
        "django__django-13590", "django__django-13658", "django__django-13670", "django__django-13741",
        "django__django-13786", "django__django-13794", "django__django-13807", "django__django-13809",
        "django__django-13810", "django__django-13820", "django__django-13821", "django__django-13837",
        "django__django-13925", "django__django-13933", "django__django-13964", "django__django-14007",
        "django__django-14011", "django__django-14017", "django__django-14034", "django__django-14053",
        "django__django-14089", "django__django-14122", "django__django-14140", "django__django-14155",
        "django__django-14170", "django__django-14238", "django__django-14311", "django__django-14315",
        "django__django-14349", "django__django-14351", "django__django-14373", "django__django-14376",
        "django__django-14404", "django__django-14434", "django__django-14493", "django__django-14500",
        "django__django-14534", "django__django-14539", "django__django-14559", "django__django-14580",
        "django__django-14608", "django__django-14631", "django__django-14672", "django__django-14725",
        "django__django-14752", "django__django-14765", "django__django-14771", "django__django-14787",
        "django__django-14792", "django__django-14855",
    ),
})

POLYGLOT_SUBSETS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "small": (
        "go__dominoes", "cpp__all-your-base", "python__dominoes", "java__sgf-parsing",
        "javascript__robot-name", "rust__variable-length-quantity", "python__beer-song", "go__book-store",
        "javascript__bottle-song", "rust__bowling",
    ),
    "medium": (
        "javascript__queen-attack", "rust__wordy", "python__dot-dsl", "java__satellite", "cpp__diamond",
        "rust__accumulate", "go__error-handling", "cpp__queen-attack", "rust__poker",
        "python__sgf-parsing", "rust__react", "java__ledger", "go__connect", "rust__macros",
        "javascript__triangle", "java__zipper", "java__bowling", "python__tree-building",
        "javascript__say", "java__wordy", "python__food-chain", "javascript__wordy", "python__poker",
        "javascript__grade-school", "cpp__gigasecond", "java__forth", "python__dominoes",
        "go__word-search", "javascript__simple-linked-list", "go__counter", "java__react",
        "javascript__ocr-numbers", "python__scale-generator", "java__go-counting",
        "rust__doubly-linked-list", "python__grade-school", "javascript__forth", "python__wordy",
        "java__mazy-mice", "cpp__bank-account", "python__zipper", "java__custom-set", "java__rest-api",
        "go__transpose", "rust__gigasecond", "rust__say", "go__food-chain", "rust__pig-latin",
        "go__markdown", "go__crypto-square",
    ),
})


def _union(*parts: tuple[str, ...]) -> tuple[str, ...]:
    """The ids of `parts` in order, each once (DGM's polyglot lists share `python__dominoes`)."""
    return tuple(dict.fromkeys(task for part in parts for task in part))


# The whole sets the published runs searched on, in DGM's stage order (evolve/configs/ uses them):
# `dgm` is DGM's 200 SWE-bench tasks (small, medium, big) and its 59 polyglot tasks (small, medium);
# `60` is HGM's SWE-Verified-60 (small and medium).
SWEBENCH_SUBSETS = MappingProxyType(dict(SWEBENCH_SUBSETS) | {
    "dgm": _union(SWEBENCH_SUBSETS["small"], SWEBENCH_SUBSETS["medium"], SWEBENCH_SUBSETS["big"]),
    "60": _union(SWEBENCH_SUBSETS["small"], SWEBENCH_SUBSETS["medium"]),
})
POLYGLOT_SUBSETS = MappingProxyType(dict(POLYGLOT_SUBSETS) | {
    "dgm": _union(POLYGLOT_SUBSETS["small"], POLYGLOT_SUBSETS["medium"]),
})
