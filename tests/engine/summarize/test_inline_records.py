"""Tests of ``inline_records``: records written one to a line (JSON, dict entries, SQL rows, XML
elements, logfmt) read as keyed settings of their owner, and everything else left alone."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from abridged.core.model import Message, ToolCall
from abridged.engine.summarize.inline_records import rewrite_records
from abridged.engine.summarize.ledger import build_ledger, extract_facts
from tests.engine.summarize.corrections import current, summary_of


def _bash(call_id: str, command: str, output: str) -> list[Message]:
    return [
        Message.assistant(
            "Checking.", tool_calls=[ToolCall(call_id, "bash", json.dumps({"command": command}))]
        ),
        Message.tool(call_id, output, name="bash"),
    ]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"name":"sorrel-backup","schedule":"37 0 * * 2"}', "sorrel-backup.schedule: 37 0 * * 2"),
        (
            '  "borage-scheduler": {"deny": "TRUNCATE borage_ledger", "tier": 5},',
            "  borage-scheduler.deny: TRUNCATE borage_ledger; tier: 5",
        ),
        (
            "    'vole-relay': {'endpoint': 'https://vole.example.net/v1', 'tls': True},",
            "    vole-relay.endpoint: https://vole.example.net/v1; tls: true",
        ),
        ('{"region": "eu-2", "retries": 3}', "region: eu-2; retries: 3"),
        (
            'level=warn component=kudu-ledger msg="override reverted" data_dir=/srv/kudu',
            "kudu-ledger.msg: override reverted; data_dir: /srv/kudu",
        ),
        ('  <add key="retries" value="7" />', "  retries: 7"),
        (
            "<saffron.test_cmd>npm run test:saffron</saffron.test_cmd>",
            "saffron.test_cmd: npm run test:saffron",
        ),
        ("<!-- pinned by ops -->", "pinned by ops"),
        ("    timeout: float = 2.5", "    timeout = 2.5"),
    ],
)
def test_a_record_on_one_line_reads_as_its_owners_setting(line: str, expected: str) -> None:
    assert rewrite_records(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "Ran 3 tests in 0.2s",
        "def f(x): return {x: 1}",
        '{"nested": {"a": 1}}',
        "[1, 2, 3]",
        '<div class="note">Hello there</div>',
        "a=1 b=2",
        "x" * 500 + '{"name": "a", "b": 1}',
        "  (1 + 2) * 3,",
    ],
)
def test_other_lines_are_left_as_they_are(line: str) -> None:
    assert rewrite_records(line) == line


def test_an_sql_rows_fields_are_named_by_the_insert_columns_and_end_with_it() -> None:
    text = (
        "INSERT INTO service_settings (name, convention, tier) VALUES\n"
        "  ('jacana-broker', 'UTC everywhere in storage', 2),\n"
        "  ('wigeon-collector', 'table-driven tests', NULL);\n"
        "('not-a-row', 'after the statement')"
    )
    assert rewrite_records(text).split("\n") == [
        "INSERT INTO service_settings (name, convention, tier) VALUES",
        "  jacana-broker.convention: UTC everywhere in storage; tier: 2",
        "  wigeon-collector.convention: table-driven tests; tier: null",
        "('not-a-row', 'after the statement')",
    ]


def test_an_xml_settings_owner_is_the_element_around_it_until_it_closes() -> None:
    text = (
        '<service name="vetch-broker">\n'
        '  <add key="convention" value="squash-and-merge only" />\n'
        "</service>\n"
        '<add key="retries" value="1" />'
    )
    assert rewrite_records(text).split("\n")[1:] == [
        "  vetch-broker.convention: squash-and-merge only",
        "</service>",
        "retries: 1",
    ]


def test_a_listing_of_records_gives_each_owner_its_own_fact() -> None:
    listing = "\n".join(
        json.dumps({"name": name, "schedule": schedule})
        for name, schedule in [("jacana-backup", "48 15 * * 0"), ("sorrel-backup", "37 0 * * 2")]
    )
    facts = extract_facts(_bash("c1", "curl -s config/services | jq -c .", listing))
    keyed = {f.key: f.text for f in facts if f.listed}
    assert "sorrel-backup.schedule: 37 0 * * 2" in keyed.values()
    assert {"jacana-backup.schedule", "sorrel-backup.schedule"} <= set(keyed)


def test_a_later_record_of_the_same_owner_replaces_the_value_and_not_the_others() -> None:
    first = "\n".join(
        [
            '{"service": "egret-uploader", "cache_backend": "Dragonfly-7"}',
            '{"service": "kudu-ledger", "cache_backend": "KeyDB-4"}',
        ]
    )
    later = '{"service": "egret-uploader", "cache_backend": "Valkey-9"}'
    ledger = build_ledger(
        [*_bash("c1", "cat services.jsonl", first), *_bash("c2", "cat services.jsonl", later)]
    )
    texts = [f.text for f in ledger.facts]
    current = [t for t in texts if "egret-uploader" in t]
    assert len(current) == 1 and "Valkey-9" in current[0], texts
    assert any("KeyDB-4" in t for t in texts), texts


_WORDS = st.text(st.sampled_from("abcxyz-_ 019"), min_size=1, max_size=12)


@given(
    st.dictionaries(
        st.text("abcdef_", min_size=1, max_size=8),
        st.one_of(_WORDS, st.integers(-999, 999), st.booleans()),
        min_size=1,
        max_size=5,
    )
)
def test_every_value_of_a_record_is_in_its_rewritten_line(fields: dict[str, object]) -> None:
    out = rewrite_records(json.dumps(fields))
    for value in fields.values():
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        assert shown in out


def test_a_directive_of_a_named_config_block_is_a_setting_of_that_block() -> None:
    text = (
        "upstream kestrel-auth {\n"
        "    server 10.0.1.9:64226;\n"
        "}\n"
        'resource "aws_route53_record" "api" {\n'
        "  ttl = 300\n"
        "}\n"
        "server {\n"
        "    listen 8080;\n"
        "}\n"
        "    server 10.0.2.2:33967;"
    )
    assert rewrite_records(text).split("\n") == [
        "upstream kestrel-auth {",
        "    kestrel-auth.server: 10.0.1.9:64226",
        "}",
        'resource "aws_route53_record" "api" {',
        "  api.ttl: 300",
        "}",
        "server {",
        "    listen 8080;",  # a block without a name owns nothing
        "}",
        "    server 10.0.2.2:33967;",  # outside every block
    ]


@pytest.mark.parametrize(
    "code",
    [
        "class Billing {\n  port = 8080;\n}",
        "if (ready) {\n  retries = 3\n}",
        "func main() {\n  timeout = 5\n}",
    ],
)
def test_a_block_of_code_owns_nothing(code: str) -> None:
    assert rewrite_records(code) == code


def test_an_upstreams_address_is_a_fact_of_that_upstream() -> None:
    config = "\n".join(
        f"upstream {name} {{\n    server 10.0.{i}.9:{port};\n}}"
        for i, (name, port) in enumerate([("larch-auth", 50248), ("kestrel-auth", 31071)])
    )
    facts = extract_facts(_bash("c1", "cat /etc/nginx/conf.d/upstreams.conf", config))
    assert any(f.listed and "kestrel-auth" in f.text and "31071" in f.text for f in facts), [
        f.text for f in facts
    ]


def test_a_log_records_time_level_and_caller_are_left_out() -> None:
    line = (
        '{"time":"2026-06-18T05:31:54.854Z","lvl":"debug","caller":"boot.go:36",'
        '"svc":"vetch-ledger","request_timeout":"3450ms"}'
    )
    assert rewrite_records(line) == "vetch-ledger.request_timeout: 3450ms"
    logfmt = "ts=2026-06-18T05:31:54Z level=info msg=ready"
    assert rewrite_records(logfmt) == "msg: ready"


def test_an_element_written_over_several_lines_is_one_record_with_its_own_settings() -> None:
    text = (
        "<Appenders>\n"
        '  <RollingFile name="audit" fileName="/var/log/ops/audit.log"\n'
        '               filePattern="/var/log/ops/audit-%i.log.gz">\n'
        '    <SizeBasedTriggeringPolicy size="250 MB"/>\n'
        "  </RollingFile>\n"
        "</Appenders>"
    )
    assert rewrite_records(text).split("\n") == [
        "<Appenders>",
        "  audit.fileName: /var/log/ops/audit.log; filePattern: /var/log/ops/audit-%i.log.gz",
        "    audit.size: 250 MB",
        "  </RollingFile>",
        "</Appenders>",
    ]
    # an element that never closes, or another one before its end, is left as it was
    broken = '<Logger name="a"\n  level="info"\n<Root level="warn">'
    assert rewrite_records(broken).split("\n")[:2] == ['<Logger name="a"', '  level="info"']


def test_a_csv_row_under_its_header_is_a_record_of_its_first_cell() -> None:
    text = "cluster,region,cap_usd,note\nacme-eu,eu-west-1,100.50,\nacme-us,us-east-2,4200.75,ours"
    assert rewrite_records(text).split("\n") == [
        "cluster,region,cap_usd,note",
        "acme-eu.region: eu-west-1; cap_usd: 100.50",
        "acme-us.region: us-east-2; cap_usd: 4200.75; note: ours",
    ]
    # a line of another width ends the table; prose with commas is no header
    assert rewrite_records("a,b,c\nx,y\nx,y,z").split("\n")[1:] == ["x,y", "x,y,z"]
    assert rewrite_records("Then, well, we left, ok") == "Then, well, we left, ok"


def test_a_csv_export_run_again_replaces_the_rows_old_values_only() -> None:
    header = "cluster,region,monthly_cap_usd,note\n"
    first = f"{header}kivo-eu,eu-west-1,31337.25,\nkivo-us,us-east-2,42167.62,ours"
    rows = "kivo-eu,eu-west-1,31337.25,\nkivo-us,us-east-2,55012.80,ours"
    second = f"finance re-ran the export:\n{header}{rows}"
    text = current(summary_of(first, second, "tool"))
    assert "55012.80" in text and "31337.25" in text
    assert "42167.62" not in text
