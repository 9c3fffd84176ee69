"""Which lines of a diff are removals (``engine/summarize/diffs.py``): a diff's, never a list's."""

from __future__ import annotations

from abridged.engine.summarize.diffs import patches_code, removed_lines


def test_removed_lines_are_a_diffs_only() -> None:
    assert removed_lines(["-port: 80", "+port: 8080"]) == {0}
    assert removed_lines(["@@ -1 +1 @@", "- keep: x", "+ keep: y"]) == {1}
    # bullets, flags, votes and a lone dash line are not a diff
    assert removed_lines(["- one", "+ two"]) == frozenset()
    assert removed_lines(["--dry-run  do nothing", "+1 from me"]) == frozenset()
    assert removed_lines(["-v verbose"]) == frozenset()


def test_a_diff_of_source_code_is_told_from_one_of_settings() -> None:
    assert patches_code(["diff --git a/shop/models.py b/shop/models.py", "-x = 1", "+x = 2"])
    assert not patches_code(["diff --git a/deploy/prod.toml b/deploy/prod.toml", "-x = 1"])
    assert not patches_code(["-x = 1", "+x = 2"])
