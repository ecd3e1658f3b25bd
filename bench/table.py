"""The results of `python -m bench` as a plain-text table; every section that ran is shown, and a missing one is skipped."""

from typing import Any

MIB = 1024 * 1024


def _x(value: float | None) -> str:
    return f"{value:.2f}x" if value is not None else "n/a"


def _machine(m: dict[str, Any]) -> list[str]:
    packages = ", ".join(f"{k} {v}" for k, v in m["packages"].items() if v)
    return [
        f"machine: {m['nproc']} CPUs ({m['cpu_model']}), {m['memory_gib']} GiB, "
        f"{m['implementation']} {m['python']}, {m['os']}",
        f"  {packages}; load average at start {m['load_average_at_start']}",
    ]


def _ours_from(results: dict[str, Any]) -> list[str]:
    where = results.get("ours_from")
    if where is None:
        return []
    said = (
        "a clean install of this checkout (bench/.ours-venv, no test extras), like the peer's"
        if where == "clean"
        else f"the development environment, with the test extras ({where})"
    )
    return [f"  our server runs from {said}"]


def _cold(c: dict[str, Any]) -> list[str]:
    sizes = c["tools_list"]
    imports = c["imports"]
    rows = [
        f"cold start over stdio: spawn -> tools/list answered (median of {c['spawns']} spawns)",
        f"  {'':<44} {'median':>9} {'min':>9} {'max':>9}",
    ]
    for label, key in (
        ("woodpecker-ci-mcp", "ours"),
        ("floor: same SDK's low-level server, no tools", "sdk_floor"),
        ("python -c pass", "interpreter"),
    ):
        s = c[key]
        rows.append(f"  {label:<44} {s['median_ms']:>7.0f}ms {s['min_ms']:>7.0f}ms {s['max_ms']:>7.0f}ms")
    if c.get("peer"):
        s = c["peer"]
        rows.append(
            f"  {'peer (woodpecker-ci-mcp 0.5.2, fastmcp)':<44} {s['median_ms']:>7.0f}ms {s['min_ms']:>7.0f}ms "
            f"{s['max_ms']:>7.0f}ms"
        )
    rows.append(
        f"  ratio to the SDK floor {_x(c['ratio_to_sdk_floor'])} (of the minimums {_x(c['ratio_of_minimums'])}); "
        f"this project adds {c['added_by_this_project_ms']:.0f} ms at the median"
    )
    cpu, imported = c["cpu_ms"], c["import_cpu_ms"]
    rows.append(
        f"  CPU per start (median): {cpu['ours_median']:.0f} ms vs {cpu['sdk_floor_median']:.0f} ms for the floor "
        f"({_x(cpu['ratio'])})"
    )
    if c.get("peer"):
        p = c["peer"]
        rows.append(
            f"  peer: CPU per start {p['cpu_median_ms']:.0f} ms; {p['tools']} tools, {p['answer_bytes']:,}-byte "
            f"tools/list; ours/peer {_x(p['ratio_ours_to_peer'])}"
        )
    rows.append(
        "  import CPU (least of 9): "
        + ", ".join(
            f"{k.replace('_', ' ')} {v:.0f} ms" if v is not None else f"{k} n/a" for k, v in imported.items()
        )
    )
    rows.append(
        "  tools/list answer: "
        + "; ".join(
            f"{k.replace('_', '-')} {v['tools']} tools {v['bytes']:,} bytes" for k, v in sizes.items()
        )
    )
    rows.append(
        f"  import self time (-X importtime): this project {imports['this_project_ms']:.0f} ms, "
        f"MCP SDK modules {imports['mcp_sdk_ms']:.0f} ms, all {imports['total_ms']:.0f} ms"
    )
    return rows


def _first_answer(f: dict[str, Any]) -> list[str]:
    rows = [
        f"first answer over stdio: spawn -> initialize, tools/call {f['tool']} answered; and a session's first "
        f"call after {f['idle_seconds']:g} s idle beside its later ones (median of {f['rounds']}, alternating)",
        f"  {'':<28} {'spawn->answer':>14} {'first call':>11} {'later call':>11} {'first extra':>12}",
    ]
    for label, key in (
        ("woodpecker-ci-mcp", "ours"),
        ("  the same, dev environment", "ours_dev"),
        ("peer", "peer"),
    ):
        s = f.get(key)
        if s:
            rows.append(
                f"  {label:<28} {s['spawn_to_first_answer']['median_ms']:>12.0f}ms "
                f"{s['first_call']['median_ms']:>9.1f}ms {s['later_call_median_ms']:>9.1f}ms "
                f"{s['first_call_extra_median_ms']:>10.1f}ms"
            )
    return rows


def _round_trip(r: dict[str, Any]) -> list[str]:
    ours, floor = r["ours"], r["floor_direct_httpx"]
    rows = [
        f"read round trip: {r['tool']} x {ours['n']} in one stdio session ({r['answer_bytes']:,}-byte answer; "
        f"client: {'the MCP SDK' if r.get('client') == 'sdk' else 'raw JSON-RPC lines'})",
        f"  {'':<36} {'median':>9} {'p90':>9} {'p99':>9}",
        f"  {'MCP tools/call':<36} {ours['median_ms']:>7.2f}ms {ours['p90_ms']:>7.2f}ms {ours['p99_ms']:>7.2f}ms",
        f"  {'floor: the same GET with httpx':<36} {floor['median_ms']:>7.2f}ms {floor['p90_ms']:>7.2f}ms "
        f"{floor['p99_ms']:>7.2f}ms",
    ]
    bare = r.get("sdk_floor")
    if bare:
        calls = bare["calls"]
        label = "the SDK's bare read server (" + format(bare["answer_bytes"], ",") + " bytes)"
        rows.append(
            f"  {label:<36} {calls['median_ms']:>7.2f}ms {calls['p90_ms']:>7.2f}ms {calls['p99_ms']:>7.2f}ms"
        )
    peer = r.get("peer")
    if peer:
        theirs, their_floor = peer["calls"], peer["floor_direct_httpx"]
        rows += [
            f"  {'peer ' + peer['tool'] + ' (' + format(peer['answer_bytes'], ',') + ' bytes)':<36} "
            f"{theirs['median_ms']:>7.2f}ms {theirs['p90_ms']:>7.2f}ms {theirs['p99_ms']:>7.2f}ms",
            f"  {'floor: the peer GET with httpx':<36} {their_floor['median_ms']:>7.2f}ms "
            f"{their_floor['p90_ms']:>7.2f}ms {their_floor['p99_ms']:>7.2f}ms",
        ]
    rows.append(
        f"  ratio: median {_x(r['ratio_median'])}, p99 {_x(r['ratio_p99'])}; above the GET (median) "
        f"{r['above_floor_median_ms']:.2f} ms; server CPU per call {r['server_cpu_ms_per_call']:.2f} ms"
    )
    if peer:
        rows.append(
            f"  peer: above the GET {peer['above_floor_median_ms']:.2f} ms, server CPU per call "
            f"{peer['server_cpu_ms_per_call']:.2f} ms; ours/peer {_x(peer['ratio_above_floor_ours_to_peer'])} "
            f"and {_x(peer['ratio_cpu_ours_to_peer'])}"
        )
    if bare:
        rows.append(
            f"  the SDK's bare read server: above the GET {bare['above_floor_median_ms']:.2f} ms, server CPU per "
            f"call {bare['server_cpu_ms_per_call']:.2f} ms"
            + (f"; bare/peer {_x(peer.get('ratio_above_floor_sdk_floor_to_peer'))}" if peer else "")
        )
    return rows


def _tail_cell(row: dict[str, Any], who: str) -> str:
    value = row[f"{who}_median_ms"]
    if value is not None:
        return f"{value:>8.0f}ms"
    return f"{'failed' if who in row['failures'] else '-':>10}"


def _log_tail(t: dict[str, Any]) -> list[str]:
    out = [
        f"get_step_logs, the default 200-line tail, ours and the peer alternating (median of {t['repeats']})",
        f"  {'lines':>9} {'ours':>10} {'peer':>10} {'ours/peer':>10}",
    ]
    for r in t["rows"]:
        out.append(
            f"  {r['lines']:>9,} {_tail_cell(r, 'ours')} {_tail_cell(r, 'peer')} {_x(r['ratio_ours_to_peer']):>10}"
        )
        for who, why in r["failures"].items():
            out.append(f"    {who} failed: {why.splitlines()[0][:150]}")
    return out


def _logs(rows: list[dict[str, Any]]) -> list[str]:
    out = [
        "get_step_logs (tail, default window), a fresh stdio server per size",
        f"  {'lines':>9} {'log':>9} {'seconds':>8} {'download':>9} {'ratio':>6} {'server peak RSS':>17} "
        f"{'growth':>9} {'growth/log':>10}",
    ]
    for r in rows:
        before, after = r["server_peak_rss_kib_before"] / 1024, r["server_peak_rss_kib_after"] / 1024
        out.append(
            f"  {r['lines']:>9,} {r['log_bytes'] / MIB:>6.1f}MiB {r['seconds']:>7.2f}s {r['floor_download_seconds']:>8.2f}s "
            f"{_x(r['ratio_to_download']):>6} {before:>7.1f}->{after:>5.1f}MiB "
            f"{r['peak_rss_growth_bytes'] / MIB:>6.1f}MiB {r['peak_rss_growth_per_log_byte']:>10.4f}"
        )
    return out


# What each `--http-driver` is called in the table (older results say "raw" for the httpx one).
_DRIVER_NAMES = {"wire": "wire (raw sockets)", "httpx": "raw httpx", "raw": "raw httpx", "sdk": "SDK"}


def _http(h: dict[str, Any]) -> list[str]:
    ours, floor = h["ours"], h["floor_direct_httpx"]
    rows = [
        f"Streamable HTTP: {h['sessions']} concurrent sessions x {h['calls_per_session']} calls x {h.get('rounds', 1)} "
        f"rounds ({', '.join(h['tools'])}; {h.get('driver', 'sdk')} clients); errors {ours['errors']}",
        f"  {'':<36} {'calls/s':>9} {'p50':>9} {'p99':>9} {'CPU/call':>9}",
        f"  {'MCP over HTTP':<36} {ours['calls_per_second']:>9.1f} {ours['p50_ms']:>7.2f}ms {ours['p99_ms']:>7.2f}ms "
        f"{h['server_cpu_ms_per_call']:>7.2f}ms",
    ]
    peer = h.get("peer")
    if peer:
        rows.append(
            f"  {'peer (' + peer['tool'] + '), errors ' + str(peer['errors']):<36} {peer['calls_per_second']:>9.1f} "
            f"{peer['p50_ms']:>7.2f}ms {peer['p99_ms']:>7.2f}ms {peer['server_cpu_ms_per_call']:>7.2f}ms"
        )
    rows += [
        f"  {'floor: same requests, 16 httpx clients':<36} {floor['calls_per_second']:>9.1f} "
        f"{floor['p50_ms']:>7.2f}ms {floor['p99_ms']:>7.2f}ms",
        f"  floor/ours throughput {_x(h['throughput_ratio'])}; latency p50 {_x(h['p50_ratio'])}, p99 {_x(h['p99_ratio'])}; "
        f"server RSS at end {h['server_rss_kib_end'] // 1024} MiB",
        f"  CPU per call: server {h['server_cpu_ms_per_call']:.2f} ms, the 16 {_DRIVER_NAMES.get(h.get('driver', 'sdk'), 'SDK')} clients (this process) "
        f"{h['client_cpu_ms_per_call']:.2f} ms, sharing the same cores",
    ]
    return rows


def _guard(g: dict[str, Any]) -> list[str]:
    out = [
        f"the guard: {g['tool']} x {g['iterations']} per path, the client answering yes at once",
        f"  {'path':<44} {'rounds':>6} {'median':>9} {'p90':>9} {'vs unguarded':>13}",
    ]
    labels = {
        "unguarded_write": "decline_pipeline (same POST, not guarded)",
        "token": "token: call, then call with confirm_token",
        "dialog": "dialog: 2025-11-25 elicitation/create",
        "sealed": "sealed: 2026-07-28 input_required + retry",
        "floor": "floor: the bare POST with httpx",
    }
    for path, p in g["paths"].items():
        out.append(
            f"  {labels.get(path, path):<44} {p['client_round_trips']:>6} {p['median_ms']:>7.2f}ms "
            f"{p['p90_ms']:>7.2f}ms {_x(p['ratio_to_unguarded_write']):>13}"
        )
    return out


def _log_window(w: dict[str, Any]) -> list[str]:
    if "error" in w:
        return ["bench.log_window: " + w["error"]]
    out = [
        "bench/log_window.py: the gateway's windowing and search alone (no MCP); json reader = the path before the byte-level scanner"
    ]
    for source in w["sources"]:
        out.append(
            f"  {source.get('lines', w['log_lines']):,} lines, {source['source']}: {source['log_bytes'] / MIB:.1f} MiB, "
            f"download alone {source['download_only_seconds']:.2f} s"
        )
        for r in source["runs"]:
            growth = r["peak_rss_growth_bytes"]
            shown = f"{growth / MIB:.1f} MiB" if growth is not None else "n/a"
            ratio = f" ({r['ratio_to_download']:.2f}x the download)" if "ratio_to_download" in r else ""
            out.append(f"    {r['from']:<11} {r['seconds']:>6.2f} s{ratio}, peak RSS growth {shown}")
    for p in w["parsers"]:
        out.append(f"  parser {p['parser']}: {p['mb_per_s']} MB/s")
    return out


GOALS = (
    # label, where, the ratio key, goal (ours/peer), "max" or "min"
    ("stdio cold start to tools/list", ("cold_start", "peer", "ratio_ours_to_peer"), 0.5, "max"),
    (
        "stdio spawn to the first read answer",
        ("first_answer", "peer", "ratio_spawn_to_first_answer_ours_to_peer"),
        0.45,
        "max",
    ),
    (
        "  the same, ours from the dev environment",
        ("first_answer", "ours_dev", "ratio_spawn_to_first_answer_ours_to_peer"),
        None,
        "max",
    ),
    (
        "stdio read round trip above the GET",
        ("round_trip", "peer", "ratio_above_floor_ours_to_peer"),
        0.5,
        "max",
    ),
    (
        "  the same, the SDK's bare read server",
        ("round_trip", "peer", "ratio_above_floor_sdk_floor_to_peer"),
        None,
        "max",
    ),
    ("stdio server CPU per read call", ("round_trip", "peer", "ratio_cpu_ours_to_peer"), None, "max"),
    ("HTTP calls/s", ("http", "peer", "ratio_calls_per_second_ours_to_peer"), 1.5, "min"),
    ("HTTP p99", ("http", "peer", "ratio_p99_ours_to_peer"), 1.0, "max"),
    ("HTTP server CPU per call", ("http", "peer", "ratio_cpu_per_call_ours_to_peer"), 0.8, "max"),
)


def _dig(results: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = results
    for key in path:
        if not isinstance(value, dict) or value.get(key) is None:
            return None
        value = value[key]
    return value


def _versus_peer(results: dict[str, Any]) -> list[str]:
    peer = results.get("peer") or {}
    if "skipped" in peer:
        return [f"versus the peer ({peer['package']}): {peer['skipped']}"]
    rows = [
        f"versus the peer ({peer.get('package')} {peer.get('version')}, Python 3.13), ours/peer in this run",
        f"  {'figure':<40} {'ours/peer':>10} {'goal':>8}  met",
    ]
    lines: list[tuple[str, float | None, float | None, str]] = [
        (label, _dig(results, path), goal, kind) for label, path, goal, kind in GOALS
    ]
    tail = results.get("log_tail") or {}
    for row in tail.get("rows", []):
        if row["lines"] == 40_000:
            lines.append(("40,000-line log tail, wall", row["ratio_ours_to_peer"], 0.3, "max"))
    for label, value, goal, kind in lines:
        if value is None:
            continue
        met = "" if goal is None else ("yes" if (value <= goal if kind == "max" else value >= goal) else "no")
        shown_goal = "" if goal is None else ("<=" if kind == "max" else ">=") + f"{goal:g}"
        rows.append(f"  {label:<40} {_x(value):>10} {shown_goal:>8}  {met}")
    for row in tail.get("rows", []):
        if row["lines"] != 40_000:
            answered = {who: row[f"{who}_median_ms"] is not None for who in ("ours", "peer")}
            rows.append(
                f"  {row['lines']:,}-line log tail answered: ours {'yes' if answered['ours'] else 'no'}, "
                f"peer {'yes' if answered['peer'] else 'no'}"
            )
    return rows


def render(results: dict[str, Any]) -> str:
    parts = [_machine(results["machine"]) + _ours_from(results)]
    for key, section in (
        ("cold_start", _cold),
        ("first_answer", _first_answer),
        ("round_trip", _round_trip),
        ("log_tail", _log_tail),
        ("step_logs", _logs),
        ("http", _http),
        ("guard", _guard),
        ("log_window", _log_window),
    ):
        if key in results:
            parts.append(section(results[key]))
    if "peer" in results:
        parts.append(_versus_peer(results))
    parts.append(
        [
            f"whole run: {results['wall_seconds']} s; load average at the end {results.get('load_average_at_end')}"
        ]
    )
    return "\n\n".join("\n".join(rows) for rows in parts)
