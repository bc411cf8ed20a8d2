"""Type stubs of mcpping._native, the C extension (CPython C API)."""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

VERSION: str
MCPP_ERR_INVALID_ARGUMENT: int
MCPP_ERR_NOMEM: int
MCPP_ERR_INTERVAL_TOO_SHORT: int
MCPP_ERR_UNSUPPORTED: int
MCPP_ERR_TOO_MANY_PINGS: int
MCPP_ERR_CLOSED: int
MCPP_ERR_FRAME_TOO_LARGE: int
MCPP_ERR_FRAME_NEWLINE: int
MCPP_ERR_SPAWN: int
MCPP_ERR_FLOODED: int
MCPP_ERR_IO: int
MCPP_ERR_STALE: int
MCPP_ERR_NOT_FOUND: int
MCPP_ERR_THREAD: int
MCPP_ERR_WOULD_BLOCK: int
MCPP_ERR_NOT_HTTP: int
#: The JSON-RPC code of the error a request gets when its server failed in flight.
MCPP_CODE_IN_DOUBT: int
#: What the engine's send callback is handed with each frame (mcpp_frame_kind).
MCPP_FRAME_PING: int
MCPP_FRAME_PONG: int
MCPP_FRAME_CANCEL: int
MCPP_FRAME_PROBE: int
MCPP_MAX_MS: int
MCPP_TIMEOUT_NONE: int
MCPP_MIN_INTERVAL_FLOOR_MS: int

class NativeError(Exception):
    """An MCPP_ERR_* code: args are (code, message, name)."""

#: One drained item: (handle, kind, ...). Kinds: 0 message (bytes),
#: 1 event (NativeEvent, ping_token), 2 record (str), 3 stderr (bytes),
#: 4 closed ((err, reason, exit_status, term_signal)), 5 ping failed (token, err),
#: 6 writable (a refused send may be retried).
Item = tuple[Any, ...]

class NativeEvent:
    """One drained event; ``dict()`` builds the dict Engine callbacks get."""
    name: str
    state: str
    outcome: str | None
    rtt_us: int
    def dict(self) -> dict[str, Any]: ...

def spawn(handle: object, argv: Sequence[str], env: Sequence[str] | None, cwd: str | None,
          settings: dict[str, Any], stderr_mode: int, kill_grace_ms: int) -> int:
    """Spawns a stdio server on the I/O thread; returns its connection id."""
def send(conn_id: int, frame: bytes, timeout_ms: int = 0) -> bool:
    """Queues one frame (no newline) with a request's timeout (0: default);
    False if the outbound queue is full: retry after a writable item."""
def cancel_request(conn_id: int, id_json: bytes) -> None:
    """Abandons an in-flight request (raw JSON id): cancelled on the wire,
    answered with a -32800 error."""
def ping(conn_id: int, timeout_ms: int, token: int) -> None:
    """Queues a manual ping whose outcome is drained with ``token``."""
def cancel_ping(conn_id: int, token: int) -> None:
    """Forgets the manual ping queued with ``token``: no outcome follows."""
def pid(conn_id: int) -> int | None:
    """The server's process id, None once closed."""
def set_retry_budget(burst: int, per_second: float) -> None:
    """The reconnect budget every connection of the process shares."""
def close(conn_id: int) -> bool:
    """Queues a close; False if the connection is already gone."""
def info(conn_id: int) -> dict[str, Any] | None:
    """The engine's state and counters, None once closed."""
def unreadable(conn_id: int) -> tuple[int, str] | None:
    """How many lines the server wrote are not JSON-RPC, and the sentence
    that says so ("" if none); None once closed."""
def drain() -> list[list[Any]]:
    """Clears the wake pipe and returns every queued item, oldest first, as
    one ``[handle, conn_id, charge, items]`` per connection; ``charge``
    bytes count against the connection until ``release``."""
def release(conn_id: int, charge: int) -> None:
    """Gives back a drained batch's charge once its loop processed it."""
def set_records(conn_id: int, enabled: bool) -> None:
    """Whether the connection's governance records cross to the host."""
def set_ping_events(conn_id: int, enabled: bool) -> None:
    """Whether PING and keepalive PONG events cross (off: kept in C, no wake)."""
def feed_rtt(conn_id: int, stats: Any) -> None:
    """The runtime feeds ``stats`` (an RttStats, RTTs in seconds) every ping outcome."""
def wake_fd() -> int:
    """The wake pipe's read end (creates the runtime)."""
def host_turn(source: int) -> list[list[Any]]:
    """One turn of the host's loop (source 0: the runtime's descriptor is
    readable, 1: the wake pipe is, 2: the armed turn is due): in host mode,
    on the host thread, runs the runtime's loop once without blocking and
    arms the next turn; then drains, as ``drain()``."""
def host_attach(arm: Callable[[int], bool],
                watch: Callable[[int, int], None] | None = None) -> int | None:
    """Host mode, driven from this thread: the descriptor to watch for
    readability, or None if the runtime refused (see ``runtime_mode``).
    ``arm(ms)`` asks for a ``host_turn(2)`` within ms (0: soon); it returns
    whether it armed one. ``watch(fd, on)`` asks this thread to watch a
    connection's fd (``host_read_ready`` when readable) or to stop."""
def host_read_ready(fd: int, dispatch: Callable[[list[list[Any]]], None]) -> None:
    """A watched connection's fd is readable (the loop's reader callback
    itself): the host reads it, then calls ``dispatch`` with what
    ``drain()`` would return, only if the read queued something."""
def host_detach() -> bool:
    """Back to thread mode (any thread); False if not in host mode."""
def spawn_os_error() -> int:
    """After a spawn() that failed on this thread because the OS refused:
    its errno (ENOENT, EACCES), else 0."""
def runtime_mode() -> tuple[str, str]:
    """("host" or "thread", why)."""
def host_stats() -> dict[str, int]:
    """takeovers, host_turns, inline_commands, host_reads."""
def after_fork_child() -> None:
    """Resets the runtime in a forked child."""
def shutdown() -> None:
    """Closes every connection, kills and reaps servers, joins the I/O thread."""
def wrap(argv: Sequence[str], settings: dict[str, Any], restart: bool, log: str | None,
         metrics: str | None, in_fd: int, out_fd: int, server: str | None = None) -> int:
    """Runs the ``mcpping wrap`` proxy (mcpp_wrap_run) in this thread, the
    GIL released, until the client or the server is gone; returns the exit
    status. ValueError for options mcpp_wrap_options_problem refuses."""
def http_url(url: str, headers: dict[str, str]) -> dict[str, Any] | str:
    """What a Streamable HTTP client makes of url: ``request_url`` (no
    credentials, no fragment), ``target`` (path and query), ``name``
    (host:port), ``host``, ``shown`` (for sentences and records: ``***`` for
    the credentials and the query), ``port``, ``https``, ``authorization`` (Basic from
    the URL's user:password unless headers has an Authorization, else None);
    or the sentence refusing it, which reads after the URL ("has no host")."""
def http_tls_error_name(verify_code: int) -> str:
    """A TLS failure as both hosts name it: 0 (no certificate verdict)
    'EPROTO', an X509_V_ERR_* code 'DEPTH_ZERO_SELF_SIGNED_CERT' and the like."""
def http_resolve_error_name(code: int) -> str | None:
    """A getaddrinfo failure (socket.gaierror's errno) as both hosts name
    it: 'ENOTFOUND', 'EAI_AGAIN', ...; None if unknown."""
def http_header_problem(name: str, value: str) -> str | None:
    """Why a request header cannot be sent (reads after its name: "is not
    an HTTP header name ...", "has a control character ..."), None if it can."""
def env_safe(name: str, value: str) -> bool:
    """Whether the SDKs' safe subset of the environment keeps name=value (mcpp_env_safe)."""
def ping_unreachable_answer(ping: bytes) -> bytes | None:
    """The answer a ping the engine made gets when no stream would carry it
    to the peer: JSON-RPC -32601 under its id; None if ping is no request."""
def unserved_request_answer(frame: bytes) -> bytes | None:
    """The answer a request from the peer gets when the application serves
    none: JSON-RPC -32601 "Method not found" under its id; None if frame is
    no request (a response, a notification, an id of null)."""
def stale_bound_ms(interval_ms: int, timeout_ms: int, failures: int) -> int:
    """The longest a frozen peer goes before it is stale: interval +
    timeout x failures, capped at the longest timer (0: the default)."""
def settings_table() -> tuple[dict[str, Any], ...]:
    """Every setting of the C table (mcpping/settings.h), times in seconds."""
def arguments_table() -> tuple[dict[str, Any], ...]:
    """The call arguments that are no setting (mcpp_arguments_table: kill_grace_ms,
    retry_budget.burst, retry_budget.per_second, rtt_window), as settings_table's rows."""
def setting_range(name: str, low: float | None = None, low_name: str | None = None) -> str:
    """What the setting allows, in seconds for a time (C's words)."""
def setting_check(name: str, shown: str, value: float, low: float | None = None,
                  low_name: str | None = None) -> int | float:
    """The value (seconds for a time) in C's unit, or ValueError with C's sentence."""
def setting_check_text(name: str, shown: str, value: str) -> None:
    """None, or ValueError with C's sentence (probe_method: a method name)."""
def metric_families() -> tuple[dict[str, Any], ...]:
    """metrics.c's families: name, kind, help, unit, field, label, values."""
def metric_series_labels() -> tuple[str, ...]: ...
def metric_rtt_buckets() -> tuple[tuple[float, str], ...]:
    """The RTT histogram's bounds: (seconds, le text)."""
def metrics_render(series: Sequence[dict[str, Any]]) -> str:
    """The Prometheus text of the series (metrics.c)."""
def metrics_cell(peer: str, transport: str) -> object:
    """A connection's figures counted in C (metrics_tally.c)."""
def metrics_retire(cell: object) -> None:
    """Folds the cell into its labels' total (once)."""
def metrics_attach(conn_id: int, cell: object | None) -> None:
    """The runtime counts the connection's events into the cell (None: no longer)."""
def metrics_attach_engine(engine: Engine, cell: object) -> None:
    """The engine counts its events into the cell."""
def metrics_set_in_flight(cell: object, n: int) -> None:
    """The cell's in-flight gauge, from the live connection."""
def metrics_rows() -> list[dict[str, Any]]:
    """Every label set's figures now, as series dicts (metrics_render's)."""
def metric_rtt_growth(now: Sequence[int], before: Sequence[int], sum: float) -> list[float]:
    """RTTs in their buckets summing to ``sum`` that reproduce the growth."""
def metrics_text() -> str:
    """The Prometheus text of every label set's figures now."""
# The mcpping command's application layer (_app.c, csrc/src/app).
def demo_answer(line: bytes) -> bytes | None: ...  # mcpp_demo_answer: the demo server's answer, None when none is due
def cli_parse(argv: list[str]) -> dict[str, Any]: ...
def cli_run(argv: list[str], now_ms: int) -> object: ...
def cli_next(run: object, now_ms: int) -> tuple[int, str | None, int, int, int, bytes, bytes]: ...
def cli_open_done(run: object, now_ms: int, result: int, peer: str | None, transport: str | None,
                  protocol_version: str | None, session_id: str | None,
                  reason: str | None) -> None: ...
def cli_replied(run: object, now_ms: int, kind: int, rtt_ms: float, code: int | None,
                message: str | None) -> None: ...
def cli_tools(run: object, now_ms: int, kind: int, names: Sequence[str], code: int | None,
              message: str | None) -> None: ...
def cli_interrupt(run: object, now_ms: int) -> None: ...
# --config's check of one server (_config_run.c, csrc/src/app/config_run.c).
def config_run(transport: str, disabled: bool, count: int, interval_ms: int, timeout_ms: int,
               deadline_ms: int, now_ms: int) -> object: ...
def config_skip_reason(transport: str, disabled: bool) -> str | None: ...
def config_run_next(run: object, now_ms: int) -> tuple[int, int, int, bool]: ...
def config_run_open_done(run: object, now_ms: int, result: int, reason: str | None) -> None: ...
def config_run_handshake_done(run: object, now_ms: int, protocol_version: str | None) -> None: ...
def config_run_handshake_failed(run: object, now_ms: int, gone: bool, message: str | None) -> None: ...
def config_run_handshake_timed_out(run: object, now_ms: int) -> None: ...
def config_run_replied(run: object, now_ms: int, kind: int, rtt_ms: float) -> None: ...
def config_run_interrupt(run: object, now_ms: int) -> None: ...
def config_run_closed(run: object, now_ms: int, exited: bool, exit_status: int, term_signal: int,
                      connect_error: str | None) -> None: ...
def config_run_secrets(run: object, secrets: Sequence[str]) -> None: ...
def config_run_stderr(run: object, data: bytes) -> None: ...
def config_run_unreadable(run: object, count: int, sentence: str) -> None: ...
def config_run_row(run: object) -> dict[str, Any]: ...
def strerror(code: int) -> str:
    """A sentence for an MCPP_ERR_* code."""
def errname(code: int) -> str:
    """The symbolic name of an MCPP_ERR_* code."""

class Engine:
    """The sans-I/O engine. Times are monotonic microseconds."""

    def __init__(self, settings: dict[str, Any], send: Callable[[int, bytes], object],
                 on_event: Callable[[dict[str, Any]], object] | None = None,
                 on_record: Callable[[str], object] | None = None,
                 deliver: Callable[[bytes, str], object] | None = None, now: int = 0) -> None:
        """deliver(frame, kind): an answer the engine made for the application
        and its kind (``timeout``, ``abandoned``, ``in_doubt``, ``cancelled``)."""
    def recv(self, frame: bytes, now: int) -> int:
        """0: forward to the application; 1: consumed."""
    def touch(self, now: int) -> None: ...
    def observe_outbound(self, frame: bytes, now: int, timeout_ms: int = 0) -> None:
        """timeout_ms: this request's deadline (0: the default; MCPP_TIMEOUT_NONE: none)."""
    def cancel_request(self, id_json: bytes, now: int) -> bool:
        """Abandons an in-flight request; False if it is not in flight."""
    def fail_request(self, id_json: bytes, now: int) -> bool:
        """Fails an in-flight request whose answer cannot come (in doubt); False if not in flight."""
    def unreadable(self) -> str: ...
    def awaits(self, frame: bytes) -> bool:
        """True while frame, a request that went out, still waits for its answer."""
    def set_reading(self, reading: bool, now: int) -> None:
        """False: the silence is ours (no keepalive ping, nothing times out)."""
    def ping(self, timeout_ms: int, now: int) -> int:
        """Sends a manual ping; returns its sequence number."""
    def cancel_ping(self, seq: int) -> bool: ...
    def next_deadline(self) -> int | None: ...
    def on_timer(self, now: int) -> None: ...
    def close(self, err: int, reason: str | None, now: int) -> None: ...
    def set_session_id(self, session_id: str) -> None: ...
    def info(self, now: int) -> dict[str, Any]: ...
    def in_flight(self) -> list[tuple[str, str | None, int]]: ...
    def should_close(self, event: dict[str, Any]) -> bool: ...
    def stale_reason(self) -> str:
        """Why the connection went stale, as a close reason; "" before it did."""
    def record_reconnect(self, now: int) -> None:
        """Emits a ``reconnect`` record (a session initialized again)."""
def config_rewrite(text: str, unwrap: bool, launcher: Sequence[str]) -> tuple[str, int, bool]:
    """mcpp_config_rewrite: a client config's text with its stdio servers
    behind ``launcher wrap --name ENTRY --`` (or no longer); how many changed;
    whether comments or trailing commas were dropped. ValueError if the text is
    not a JSON object."""
def config_format_files(files: Sequence[tuple[str, int]], json: bool) -> str:
    """mcpp_config_format_files: the ``config FILE: N servers`` lines."""
def config_format_start(servers: int, count: int, interval: float, timeout: float,
                        deadline: float, json: bool) -> str:
    """mcpp_config_format_start: the ``MCPPING N servers`` header ("" under --json)."""
def config_format_results(rows: Sequence[dict[str, Any]], time_ms: float, json: bool,
                          quiet: bool) -> tuple[str, int]:
    """mcpp_config_format_results: the table (or JSON rows), warnings, summary
    and the exit status."""
#: One server entry: (name, transport, json_path, command, args, env, cwd, url, headers, disabled).
ConfigServer = tuple[str, str, str, str | None, tuple[str, ...], Mapping[str, str], str | None,
                     str | None, Mapping[str, str], bool]
def config_parse(data: bytes, require_servers: bool,
                 project: str | None) -> tuple[list[ConfigServer], str | None, str | None]:
    """mcpp_config_parse: a config's entries, or the JSON path and sentence of its problem."""
def config_syntax_error_at(text: str) -> int | None:
    """mcpp_config_syntax_error_at: where strict JSON first goes wrong, in code points."""
def config_json_path(parent: str, key: str | int) -> str:
    """mcpp_config_json_path: ``$.a.b``, ``$.a["b c"]``, ``$.a[3]``."""
def config_read_problem(errno_name: str) -> str:
    """mcpp_config_read_problem: ``cannot read: No such file or directory``."""
def config_resolve(fields: ConfigServer, workspace: str, environ: Mapping[str, str],
                   home: str | None) -> tuple[str | None, tuple[str, ...], dict[str, str],
                                              str | None, str | None, dict[str, str]] | str:
    """mcpp_config_resolve: (command, args, env, cwd, url, headers) filled in, or the problem."""
def config_workspace(path: str, cwd: str | None = None) -> str:
    """mcpp_config_workspace: the folder ``${workspaceFolder}`` means."""
def config_auto_paths(cwd: str | None, home: str | None, platform: str | None,
                      environ: Mapping[str, str]) -> list[str]:
    """mcpp_config_auto_paths: ``--config auto``'s places, project files first."""
def config_strip_jsonc(text: str) -> str:
    """mcpp_config_strip_jsonc: comments and trailing commas blanked in place."""
def config_format_refusal(file: str, row: dict[str, Any]) -> str:
    """mcpp_config_format_refusal: --wrap --write's line for an entry that would not start
    ("" for one that does not refuse)."""
def config_files(configs: Sequence[str], auto_paths: Sequence[str]) -> list[tuple[str, bool]] | str:
    """mcpp_config_files: the files --config reads and whether each must hold servers, or why none."""
PING_INVALID_MESSAGE: str  # MCPP_PING_INVALID_MESSAGE
PING_UNSUPPORTED_MESSAGE: str  # MCPP_PING_UNSUPPORTED_MESSAGE
PING_CLOSED_MESSAGE: str  # MCPP_PING_CLOSED_MESSAGE
PING_TIMEOUT_FORMAT: str  # MCPP_PING_TIMEOUT_FORMAT: % the timeout in ms
PING_ERROR_FORMAT: str  # MCPP_PING_ERROR_FORMAT: % (code, message)
CLOSED_BY_APP_REASON: str  # MCPP_CLOSED_BY_APP_REASON
CONNECTION_CLOSED_TEXT: str  # MCPP_CONNECTION_CLOSED_TEXT
PROBE_AUTO: str  # MCPP_PROBE_AUTO: the probe option's word for the engine's own choice
IN_DOUBT_KINDS: frozenset[str]  # the answer kinds mcpp_answer_kind_is_in_doubt names
EVENT_NAMES: tuple[str, ...]  # every mcpp_event_name, in the enum's order
TRANSPORT_CLOSED_REASON: str  # MCPP_TRANSPORT_CLOSED_REASON
HTTP_NOT_HTTP_CAUSE: str  # the cause when what came back is no HTTP/1.1 answer
HTTP_SHORT_TIMEOUT_MS: int  # DELETE at close, a GET stream's connect and headers (MCPP_HTTP_SHORT_TIMEOUT_MS)
DEFAULT_KILL_GRACE_MS: int  # SIGTERM to SIGKILL when none is named (MCPP_DEFAULT_KILL_GRACE_MS)
DEFAULT_MAX_PENDING_BYTES: int  # a connection's max_pending_bytes when none is given
APP_KILL_GRACE_MS: int  # the commands' grace for servers they start (MCPP_APP_KILL_GRACE_MS)
CLI_STEP_SLACK_MS: int  # a step's operation is bounded at its timeout plus this (MCPP_CLI_STEP_SLACK_MS)
EXIT_OUTPUT_CLOSED: int  # the commands' status once stdout's reader left (MCPP_EXIT_OUTPUT_CLOSED)
WATCH_MAX_HEAD: int  # the watch listener's request head bound, bytes (MCPP_WATCH_MAX_HEAD)
WATCH_HEAD_TIMEOUT_MS: int  # ... and how long it may take to arrive (MCPP_WATCH_HEAD_TIMEOUT_MS)
RETRY_BUDGET_BURST: int  # the respawn budget's default burst (MCPP_RETRY_BUDGET_BURST)
RETRY_BUDGET_PER_SECOND: float  # ... and refill rate (MCPP_RETRY_BUDGET_PER_SECOND)
MAX_RETRY_BUDGET_BURST: int
MIN_RETRY_BUDGET_PER_SECOND: float
MAX_RETRY_BUDGET_PER_SECOND: float
RTT_WINDOW: int  # mcpp_rtt_stats' default window (MCPP_RTT_WINDOW)
MAX_RTT_WINDOW: int  # the largest window (MCPP_MAX_RTT_WINDOW)
REQUEST_TIMEOUT_MS: int  # a request's deadline when the caller names none (MCPP_REQUEST_TIMEOUT_MS)
INITIALIZE_TIMEOUT_MS: int  # the handshake's, likewise (MCPP_INITIALIZE_TIMEOUT_MS)
CONFIG_START_PATH: str
CONFIG_START_TIMEOUT_MS: int
def config_write(path: str, text: str, unwrap: bool, changed: int, had_comments: bool) -> tuple[int, str]:
    """mcpp_config_write: the backup, the replacement and the line to print; (exit status, line)."""

# The client protocol rules (_client.c).
PROTOCOL_VERSION: str
MODERN_PROTOCOL_VERSION: str

class ClientHandshake:
    """The C core's client handshake (initialize, server/discover fallback)."""

    def __init__(self, timeout_ms: int) -> None: ...
    def request(self) -> tuple[str, bytes] | None:
        """The (id, message) to send next, or None."""
    def answer(self, message: bytes) -> str:
        """The awaited request's answer; returns the state."""
    def timed_out(self, why: str | None = None) -> None: ...
    def closed(self, reason: str | None, exit_status: int = -1, term_signal: int = 0) -> None: ...
    def notification(self) -> bytes | None: ...
    def outcome(self) -> dict[str, Any]:
        """state, version, modern, server_name, server_info (JSON), result (JSON), error, kind."""

def event_outcome(event: Any) -> str | None:
    """How a ping ended ('pong', 'timeout', 'error', 'invalid', 'unsupported',
    'closed'), None if the event ends none."""
def outcome_is_lost(outcome: str) -> bool:
    """Whether the outcome counts as a lost ping."""

class RttStats:
    """The C core's mcpp_rtt_stats: exact running figures over every pong,
    p50/p99 over the most recent ``window`` RTTs (1..2**24)."""

    def __init__(self, window: int = ...) -> None: ...
    def add(self, rtt: float) -> None:
        """Records a pong's RTT."""
    def observe(self, event: Any, us_per_unit: float) -> None:
        """Feeds a native event (ping: sent; pong: rtt_us / us_per_unit; a lost outcome: lost)."""
    def summary(self) -> dict[str, Any]:
        """sent, received, lost, loss_pct, count, min, avg, max, mdev, p50, p99 (None before any pong)."""
    def recent(self) -> list[float]:
        """The window's RTTs, oldest first."""

class HttpSession:
    """The sans-I/O Streamable HTTP client session (mcpp_http_session): the
    host tells it what happened; each call returns what to do next, in
    order, as dicts whose "do" names the action: "start" (exchange, tag,
    method, https, host, port, target, headers [(name, value)], body
    (bytes or None), request (the bytes to write: head and body),
    connect_timeout_ms, headers_timeout_ms), "cut"
    (exchange), "receive" (data), "touch", "lost" (tag), "session" (id,
    None: none), "renew", "gone" (exchange, reason), "listening" (value), "wait" (wait, ms),
    "closed". ValueError names a URL it refuses (the sentence reads after
    the URL)."""

    def __init__(self, url: str, headers: Mapping[str, str], max_body: int, listen: bool) -> None: ...
    @property
    def session_id(self) -> str | None:
        """The Mcp-Session-Id the server gave, None if none."""
    @property
    def listens(self) -> bool:
        """True while the session opens the listening stream when it can;
        False once listening is off or the server offers none (405, ...)."""
    def post(self, frame: bytes, tag: int, direct: bool) -> list[dict[str, Any]]:
        """Sends frame (tag: the request's, 0: none; direct: the handshake's
        own, never held while the session is renewed)."""
    def settled(self, tag: int) -> list[dict[str, Any]]:
        """The request is settled: what still reads for it is cut."""
    def response(self, exchange: int, status: int, content_type: str | None, session_id: str | None,
                 location: str | None) -> list[dict[str, Any]]:
        """The exchange's answer began."""
    def body(self, exchange: int, data: bytes) -> list[dict[str, Any]]:
        """The next bytes of the exchange's body."""
    def end(self, exchange: int, broken: bool) -> list[dict[str, Any]]:
        """The body ended (broken: not as HTTP ends one)."""
    def failed(self, exchange: int, cause: str) -> list[dict[str, Any]]:
        """No answer came (cause: ECONNREFUSED, ...)."""
    def set_version(self, version: str | None) -> list[dict[str, Any]]:
        """The negotiated protocol version (None: none)."""
    def opened(self) -> list[dict[str, Any]]:
        """The handshake succeeded: the listening stream opens."""
    def renewed(self, ok: bool, why: str | None = None) -> list[dict[str, Any]]:
        """The handshake a "renew" asked for ended (why: its error)."""
    def wake(self, wait: int) -> list[dict[str, Any]]:
        """A "wait" action's time has come."""
    def close(self) -> list[dict[str, Any]]:
        """Cuts everything, then DELETE if there is a session; "closed" follows."""
    def lose(self) -> list[dict[str, Any]]:
        """The session is over without a DELETE: everything is cut."""

class NotHttp(Exception):
    """What the server sent is no HTTP/1.1 response."""

class HttpResponse:
    """One HTTP/1.1 response, parsed as its bytes come (mcpp_http_response):
    bodies by length, chunked or until the server closes; interim 1xx
    answers skipped; folded and repeated headers joined."""

    def feed(self, data: bytes) -> list[tuple[Any, ...]]:
        """What data completed, in order: ("head", status, headers),
        ("body", bytes), ("end",). Raises NotHttp on what no HTTP server
        sends (final: the parts before it in data are dropped)."""
    def closed(self) -> bool:
        """The server closed: whether that ended the answer whole."""
    @property
    def started(self) -> bool:
        """Whether the head was read (the body is under way or over)."""
    @property
    def ended(self) -> bool: ...
    @property
    def keep_alive(self) -> bool:
        """Whether the connection may carry the next request once this ends."""
    @property
    def until_close(self) -> bool:
        """Whether the body ends only when the server closes."""
    @property
    def status(self) -> int: ...
    @property
    def headers(self) -> dict[str, str]:
        """Lower-case names; repeated headers joined with ", "."""

def envelope(request: bytes) -> bytes:
    """The request with the 2026-07-28 _meta envelope."""
def watch_new(argv: list[str]) -> object: ...
def watch_usage() -> str: ...
def watch_add(watch: object, name: str, transport: str, secrets: Sequence[str],
              skip_reason: str | None) -> int: ...
def watch_listening(watch: object, host: str, port: int) -> None: ...
def watch_listen_failed(watch: object, why: str) -> None: ...
def watch_due(watch: object, now_ms: int) -> tuple[int, int]: ...
def watch_opened(watch: object, i: int, now_ms: int, peer: str | None,
                 protocol_version: str | None, pid: int) -> None: ...
def watch_open_failed(watch: object, i: int, now_ms: int, why: int, detail: str | None) -> None: ...
def watch_closed(watch: object, i: int, now_ms: int, why: int, detail: str | None) -> None: ...
def watch_stderr(watch: object, i: int, data: bytes) -> None: ...
def watch_feed(watch: object, i: int, now_ms: int, name: str | None, state: str | None,
               rtt_s: float, invalid: bool, ping_seq: int, proof: str | None, attempt: int,
               pid: int, message: str | None) -> None: ...
def watch_respond(watch: object, now_ms: int, head: bytes) -> bytes: ...
def watch_stopping(watch: object) -> None: ...
def watch_stopped(watch: object) -> None: ...
def watch_output(watch: object) -> bytes: ...
