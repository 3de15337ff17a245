// budgets: every default and limit of the firmware, in one place, with its unit
// in its name and a one-line reason. Nothing numeric hides elsewhere; tools and
// benchmarks read this file too.

// ---- agent core (SPEC §4, §10; modules/agent/core) ----
export const REQUEST_QUEUE_DEPTH = 4;          // requests waiting for the serial core; more is backpressure
export const RESPONSE_QUEUE_DEPTH = 4;         // parked responses awaiting their owner; a 5th unclaimed one drops the oldest
export const INSERT_QUEUE_DEPTH = 4;           // user interrupts waiting for a checkpoint
export const MAX_TOOL_ITERATIONS = 10;         // LLM rounds per request
export const REQUEST_ID_BLOCK = 1000;             // request ids reserved per key-value write: one write per boot and per this many requests
export const REQUEST_ID_MAX = 999_999_999;        // request ids stay within 9 digits (console `cancel N` takes up to 9)
export const MAX_CONTEXT_PROVIDERS = 8;        // providers asked per iteration; bounds context building
export const MAX_COMPLETION_OBSERVERS = 4;     // listeners told when a request ends
export const MAX_SUBAGENTS = 3;                // further cores; each holds a session and an LLM call's buffers
export const CORE_SUBMIT_WAITERS_MAX = 8;      // callers waiting for room in a full request queue; more are refused at once
export const CORE_RESPONSE_WAITERS_MAX = 8;    // callers blocked in receiveFor at once (console ask, tests)
export const CORE_EVENT_LISTENERS_MAX = 8;     // event stream subscribers (console, router, bench)
export const CORE_INTERRUPTS_PER_REQUEST_MAX = 8; // interrupts one request takes; later ones queue as new requests, so a chatty chat cannot keep one request alive forever
export const CORE_STAGE_SUMMARY_MAX_CHARS = 150;  // verbose stage message: the model's text/reasoning summary
export const CORE_STAGE_ARGS_PREVIEW_MAX_CHARS = 40; // verbose stage message: one call's arguments preview
export const CORE_TOOL_SUMMARY_MAX_LINES = 16; // "- name: ok|failed" lines in a failure note; 10 rounds of a few calls fit
export const CORE_TOOL_PROGRESS_MAX_CHARS = 200; // one tool_execution_update text; a progress line, not a result
export const CORE_ERROR_MAX_CHARS = 400;       // an error sentence in a response or failure note (LLM errors quote bodies)
export const CORE_PROMPT_SPARE_MESSAGES = 8;   // room a request's prompt array keeps past its user message for the tool rounds' messages (XS copies an array that outgrows its storage: ~10 KiB for a full window on lin); 8 slots are 256 bytes on lin, 128 on the board
export const SUBAGENT_REPORT_MAX_CHARS = 4000; // a subagent's final text wrapped into <subagent_completed>: about one history message
export const SUBAGENT_REPORT_SUBMIT_TIMEOUT_MS = 30_000; // a subagent's report waits this long for room in the root's queue
export const SUBAGENT_TASK_MAX_CHARS = 2000;   // spawn_subagent's task text: the subagent's only user message, a paragraph or two

// ---- the agent port and its supervision (ARCHITECTURE.md; modules/shared/agent) ----
export const AGENT_PORT_CALLS_MAX = 32;        // calls from main awaiting the agent's reply at once; more are refused, never queued without end
export const AGENT_PORT_TEXT_MAX_CHARS = 32 * 1024; // one text field of a port message (user text, a reply, a command line): a message, not a file
export const AGENT_PORT_REPLY_MAX_CHARS = 256 * 1024; // a reply or out message's whole text, crossing in parts of AGENT_PORT_TEXT_MAX_CHARS: at least any text LLM_REPLY_MAX_BYTES holds (a character is at least a byte)
export const AGENT_PORT_ID_MAX_CHARS = 128;    // a channel name, chat id, session id or setting name: an identifier, never a text
export const AGENT_PORT_LABEL_MAX_CHARS = 160; // an answer's label (what it answers when nobody asked: a schedule's firing, how late): one short line
export const AGENT_PORT_LIST_MAX = 64;         // entries in one list of a message (commands, warnings, settings, subagents)
export const AGENT_PORT_EVENTS_HELD_MAX = 16;   // watched events waiting for the end of the agent machine's callback (agent/service); more are posted at once
export const AGENT_PORT_DELTA_HOLD_MS = 100;   // a streamed delta waits this long for the next ones of its request, then they cross the port as one message (Telegram edits a preview once a second)
export const AGENT_PORT_HEADROOM_BYTES = 128 * 1024; // chunk heap each machine keeps free after a port message (util/heap keepHeadroom): a message is copied in without collecting, and its text fields are bounded well below this
export const AGENT_COMMAND_LINES_MAX = 512;    // output lines of one agent command (memory list: 200 records); more are cut with a note
export const AGENT_REPLY_TIMEOUT_MS = 10_000;  // status, cancel, stop: the agent answers these at once; silence this long means it hangs
export const AGENT_COMMAND_TIMEOUT_MS = 180_000; // an agent command (llm test: one LLM call, 120 s, plus retries within 45 s)
export const AGENT_START_TIMEOUT_MS = 20_000;  // boot waits this long for the agent machine to open its files and say it is ready
export const AGENT_STOP_TIMEOUT_MS = 3000;     // reboot waits this long for the agent to close its files before ending it anyway
export const AGENT_RESTART_BACKOFF_MS = [250, 2000, 10_000] as const; // waits before restart 1, 2, 3 of a dead agent machine
export const AGENT_NATIVE_STACK_MARGIN = 2;     // manifest.json's config.agent.creation.nativeStack is at least this times the agent Worker's deepest C stack on the 32-bit host (npm run bench, agent.c_stack_peak_bytes.board32): the board's Xtensa frames (register-window save areas, 16-byte alignment) and IDF's own calls (newlib's printf, the PSA drivers) take more than i386's
export const AGENT_RESTART_WINDOW_MS = 10 * 60_000; // restarts counted over this window; one more death in it and the agent stays down
export const AGENT_HEARTBEAT_MS = 5000;        // a running agent machine is pinged this often (agent/supervisor)
export const AGENT_HEARTBEAT_DEADLINE_MS = 15_000; // a ping unanswered this long means the agent machine hangs: it is ended and restarted (its longest honest turn, a compaction or a script, is well under a second)

// ---- tools table and console wiring of the core (SPEC §7, §8) ----
export const TOOLBOX_MAX_TOOLS = 64;           // every definition is sent with every request: more costs tokens and heap
export const TOOL_SCHEMA_MAX_DEPTH = 4;        // nested objects/arrays checked in tool arguments; tool schemas need one or two
export const TOOL_RESULT_MAX_CHARS = 16 * 1024;// one tool result in the context; longer is cut so one tool cannot flood it
export const TOOL_ARGUMENT_PREVIEW_CHARS = 80; // names and values quoted in tool errors and log lines
export const CONSOLE_SUBMIT_TIMEOUT_MS = 5000; // `ask` waits this long for room in the request queue before saying it is busy

// ---- LLM (SPEC §5) ----
export const LLM_TIMEOUT_MS = 120_000;         // one HTTP attempt, start to last byte (llm.timeout_ms): long replies stream for a while
export const LLM_TIMEOUT_MIN_MS = 1000;        // llm.timeout_ms below this could not even finish a TLS handshake
export const LLM_TIMEOUT_MAX_MS = 600_000;     // llm.timeout_ms above this holds the one LLM slot too long
export const LLM_MAX_TOKENS = 8192;            // default max_tokens sent to the model
export const LLM_MAX_TOKENS_CEILING = 1_000_000; // llm.max_tokens above this is a typo, not a model
export const LLM_COUNT_SETTING_MAX = 1e12;     // other whole-number llm.* settings: far past any limit, exact as a double
export const LLM_CALLS_PER_HOUR = 100;         // rate limits persisted across reboots
export const LLM_CALLS_PER_DAY = 1000;         // a runaway loop or schedule stops here within a day
export const IMAGE_MAX_BYTES = 512 * 1024;     // local image before base64
export const LLM_RETRY_BACKOFF_MS = [2000, 4000, 8000] as const; // one wait per retry of connect errors, 429, 5xx: 3 retries
export const LLM_RETRY_BUDGET_MS = 45_000;     // wall clock for all retries of one call
export const LLM_TOKENS_PER_DAY = 2_000_000;    // prompt + output tokens a day (config llm.tokens_per_day; 0 = no limit)
export const LLM_USAGE_RESERVE_CALLS = 8;      // calls one usage write stores ahead: a key-value commit per 8 calls, not per call; a power loss over-counts at most 7 (never under-counts)
export const LLM_USAGE_SAVE_MS = 60_000;       // counted tokens wait at most this long for a usage write (checked as a call ends): what a power loss can lose of them
export const LLM_REPLY_MAX_BYTES = 256 * 1024; // one reply's content, streamed or not: its text, reasoning and tool arguments in decoded bytes (llm/scan ReplyMeter), and an unstreamed reply's whole body; far above 8192 tokens, fits the agent's heap (npm run bench: limits.*)
export const LLM_REPLY_TOOL_CALLS_MAX = 64;     // tool calls one streamed reply may carry (the toolbox offers at most TOOLBOX_MAX_TOOLS); one more is a protocol error, not a list a hostile stream grows
export const LLM_REPLY_BLOCKS_MAX = 128;        // content blocks one streamed Anthropic reply may open (text, thinking, tool_use): likewise
export const LLM_TOOL_NAME_MAX_CHARS = 64;      // a streamed tool call's name, as the APIs allow: fragments that grow it past this are a protocol error
export const LLM_STREAM_MAX_BYTES = 64 * 1024 * 1024; // a streamed reply's raw bytes, framing and all (none of it kept): LLM_REPLY_MAX_BYTES of content even in 1-byte tokens with 256 bytes of SSE framing each (OpenAI's is ~200)
export const LLM_BODY_START_BYTES = 16 * 1024;  // first pool buffer of a request body; doubles in place up to what the body needs
export const LLM_PIECE_ARENA_START_BYTES = 16 * 1024; // first pool buffer of a history window's wire pieces (llm/body); doubles in place, rewritten when mostly dead
export const LLM_TEXT_START_BYTES = 256;       // first buffer of a streamed reply's text, reasoning or tool arguments gathered as bytes (llm/scan TextPieces); the next ones double
export const LLM_TEXT_CHUNK_BYTES = 4096;      // ... up to this, then more of this size (a bigger piece gets its own): never copied while the reply streams
export const LLM_TEXT_KEEP_BYTES = 4096;       // the last such buffer is kept for the next reply up to this; bigger ones go back to the collector
export const LLM_TEXT_SPARES = 4;              // gatherers an Anthropic assembler keeps for the next reply's content blocks (text, thinking, tool input)
export const LLM_JSON_DEPTH_MAX = 512;         // nesting a reply's JSON may have (llm/scan keeps one byte per level twice); far past any real reply
export const LLM_JSON_PARSE_MAX_BYTES = 4096;  // a value llm/scan builds (a usage object, a content block) is one JSON.parse of its text up to this size; bigger ones are built piece by piece, so the heap never holds their text twice
export const LLM_JSON_PARSE_DEPTH_MAX = 16;    // ... and up to this nesting (JSON.parse recurses on the C stack; a deeper value is built piece by piece)
export const LLM_CACHE_BREAKPOINTS = 4;        // Anthropic allows at most 4 cache_control blocks per request
export const LLM_TEST_MAX_TOKENS = 64;         // `llm test`: a short reply is enough to prove the setup

// ---- HTTP (SPEC §5) ----
export const HTTP_BODY_START_BYTES = 4 * 1024; // response buffer starts here, doubling
export const HTTP_BODY_MAX_BYTES = 1024 * 1024;// cap: an LLM reply larger than this is an error
export const HTTP_HEADER_MAX_BYTES = 8 * 1024; // status line + headers
export const HTTP_CONNECT_TIMEOUT_MS = 15_000;      // DNS + TCP + TLS handshake: seconds on a working Wi-Fi, so more is a dead route
export const HTTP_FIRST_BYTE_TIMEOUT_MS = 60_000;  // request sent -> first body byte: a model may think a while before it streams
export const HTTP_TOTAL_TIMEOUT_MS = LLM_TIMEOUT_MS; // whole request when the caller gives none: every caller so far is an LLM call
export const HTTP_READ_BUFFER_BYTES = 16 * 1024;     // one per HTTP client, from its pool, that every socket read lands in: the sockets' own input (lin, the board's TLS) in one read
export const HTTP_HEAD_START_BYTES = 512;           // response head buffer at first; grows by doubling up to HTTP_HEADER_MAX_BYTES
export const HTTP_HEAD_NAMES_KEPT = 32;             // header names of the last response head kept by line (net/response): a name there is checked by one compare; ~32 x 100 B of heap at most
export const HTTP_ERROR_BODY_MAX_BYTES = 16 * 1024; // non-2xx body kept for the error message; the rest is dropped with the connection
export const HTTP_ERROR_MESSAGE_MAX_BYTES = 160;    // body prefix quoted in "HTTP 429: ..." when it has no JSON message
export const HTTP_CHUNK_LINE_MAX_BYTES = 256;       // chunk-size line with extensions; longer is a protocol error
export const HTTP_CHUNK_SIZE_MAX_DIGITS = 8;        // hex digits of one chunk size (< 4 GiB), so the count stays exact
export const HTTP_INTERIM_RESPONSES_MAX = 4;        // 1xx responses skipped before the real one
export const HTTP_POOL_IDLE_PER_ORIGIN = 2;         // idle keep-alive connections kept per origin (a TLS session costs ~40 KB on the device)
export const HTTP_TIMER_REPEAT_MS = 60_000;          // an HTTP client's one timer repeats this often when not set sooner (it is set for each next deadline; a repeat keeps a Moddable timer alive to be set again)
export const HTTP_POOL_IDLE_MS = 30_000;            // an idle pooled connection is closed after this
export const HTTP_STALE_RETRIES = 1;                // a reused connection that dies before any response byte is replaced this many times
export const HTTP_URL_CACHE_MAX = 4;                 // parsed URLs an HTTP client keeps (an LLM call repeats its URL; parsing one costs ~3 KB of heap)

// ---- WebSocket client (modules/shared/net/websocket) ----
export const WS_HANDSHAKE_TIMEOUT_MS = 15_000;      // DNS + TCP + TLS + the 101 answer: as HTTP_CONNECT_TIMEOUT_MS, a dead route past this
export const WS_HANDSHAKE_HEAD_MAX_BYTES = 8 * 1024; // the server's 101 head; as HTTP_HEADER_MAX_BYTES
export const WS_MESSAGE_START_BYTES = 4 * 1024;     // a message's PSRAM buffer starts here, doubling; kept between messages up to this
export const WS_MESSAGE_MAX_BYTES = 1024 * 1024;    // one received message (all fragments): a gateway event is KBs, so more is a runaway (close 1009)
export const WS_MESSAGE_FRAGMENTS_MAX = 1024;       // frames of one received message; more is refused (close 1009), so empty fragments cannot spin us
export const WS_SEND_FRAME_MAX_BYTES = 16 * 1024;   // a sent message is split into frames of at most this payload (one TLS record each)
export const WS_SEND_QUEUE_MAX_BYTES = 256 * 1024;  // bytes waiting for the socket; a send past this throws instead of piling up
export const WS_CLOSE_WAIT_MS = 3_000;              // after our close frame, this long for the server's; then the socket is closed anyway
export const WS_CLOSE_REASON_MAX_BYTES = 123;       // RFC 6455 §5.5: a control payload is at most 125 bytes, 2 of them the code
export const SSE_EVENT_MAX_BYTES = 64 * 1024;       // one server-sent event (all its lines); bigger is an error, not unbounded growth
export const SSE_LINE_START_BYTES = 256;            // SSE line and data buffers at first; most events fit, bigger ones double

// ---- sessions (SPEC §6; modules/agent/store) ----
export const SESSION_FILE_MAX_BYTES = 150 * 1024; // a completed turn leaving the data file above this compacts it; still above: blocked
export const SESSION_COMPACT_KEEP_BYTES = 64 * 1024; // a compaction keeps the newest turns' questions, answers and failure notes up to this (more than the prompt's SESSION_HISTORY_MAX_BYTES); older turns go, so one session takes any number of requests
export const MESSAGE_MAX_BYTES = 4096;            // one history message in the prompt (capped on read; the file keeps more)
export const SESSION_RECORD_MAX_BYTES = 32 * 1024; // one stored record's JSON: bigger messages are capped on write, so a length field above this is damage
export const SESSION_HISTORY_MAX_BYTES = 48 * 1024; // history given to the prompt per request: about 12k tokens
export const SESSION_HISTORY_MAX_RECORDS = 256;   // records read back per request at most, whatever their size
export const SESSION_READ_BATCH_RECORDS = 16;     // index entries read per step when walking back through a session
export const SESSION_INDEX_SYNC_APPENDS = 32;    // appends between index flushes (each after a data flush, which writes the entries of the records it commits): the data flush is the commit point; an index that lost its tail is completed at open by scanning at most this + SESSION_UNSYNCED_BATCHES_MAX batches (~11 tool turns, some 20 KB); an fsync on lin costs ~0.2 ms of CPU
export const SESSION_UNSYNCED_BATCHES_MAX = 4;   // tool rounds wait for the next USER or last batch of the turn to be flushed, or until this many wait: a power loss on the device loses at most 3 tool rounds of the turn in flight
export const SESSION_WAITING_FRAMES_MAX_BYTES = 16 * 1024; // frames of tool rounds waiting in memory for the turn's commit (one data write with it); more are written at once, unflushed: a bound on the agent heap they hold
export const SESSION_WRITE_BUFFER_BYTES = 16 * 1024; // compaction and index rebuilds write in pieces of this size
export const SESSIONS_MAX = 32;                   // session files kept on flash; `session new` beyond this asks to delete one
export const SESSIONS_PER_CHAT_MAX = 4;           // sessions a chat of a chat channel made that are kept: its oldest abandoned one goes at its next /new (issue 25: a user's /new never crowds out another chat)
export const SESSION_CHATS_MAX = 64;              // channel+chat -> session entries; the oldest mapping is forgotten beyond this
export const SESSIONS_OPEN_MAX = 4;               // session files held open at once (each holds two file handles)
export const SESSION_SHOW_MAX_RECORDS = 40;       // `session show` prints the newest records up to this many
export const SESSION_SHOW_LINE_CHARS = 160;       // one record's text in `session show`, longer is cut
export const SESSION_SALVAGE_SCAN_BYTES = 256 * 1024; // bytes searched for the next intact record after damage inside a file
export const SESSION_INFLIGHT_REQUESTS_MAX = 8;   // per session, requests of the turn in flight (one + its interrupts) whose start the history excludes
export const SESSION_CHATS_FILE_MAX_BYTES = 16 * 1024; // sessions/chats.json: SESSION_CHATS_MAX entries of ~100 bytes; larger is damage
export const STORAGE_BAD_COPIES_MAX = 8;          // damaged copies kept per file (x.bad, x.bad1 .. x.bad7; then the last is replaced), store and memory
export const SESSION_INSPECT_RECORDS_DEFAULT = 10_000; // tools/session-inspect prints this many newest records unless told: more than a 150 KiB session holds, so "all"

// ---- memory and profile (SPEC §6; modules/agent/memory) ----
export const MEMORY_RECORDS_MAX = 200;             // full mode: records kept; a full store refuses writes until one is forgotten
export const MEMORY_RECORD_MAX_BYTES = 1024;       // one record's (or MEMORY.md line's) UTF-8 text: a fact, not a document
export const MEMORY_TOTAL_TEXT_MAX_BYTES = 48 * 1024; // full mode: all records' text; the file is rewritten whole on every change
export const MEMORY_FILE_MAX_BYTES = 128 * 1024;   // full mode: the records file with its JSON and header; larger on open is corrupt
export const MEMORY_TAGS_MAX = 8;                  // tags on one record
export const MEMORY_TAG_MAX_CHARS = 32;            // one tag: a word, not a sentence
export const MEMORY_SEARCH_MAX_RESULTS = 8;        // memory_search results (default and most): enough to choose from, small in the prompt
export const MEMORY_QUERY_MAX_WORDS = 16;          // query words scored per search; more are ignored, so a search stays cheap
export const MEMORY_LIGHT_MAX_BYTES = 16 * 1024;   // light mode: MEMORY.md as a whole
export const MEMORY_CONTEXT_MAX_BYTES = 4096;      // the "memory" prompt section: stable prefix stays small and cacheable
export const MEMORY_RELEVANT_MAX_BYTES = 1024;     // memories relevant to the question that the stable section left out: volatile, after the history
export const MEMORY_PREVIEW_CHARS = 100;           // `memory list` shows this much of each record
export const PROFILE_PERSONA_MAX_BYTES = 2048;     // persona text: sent with every request
export const PROFILE_NOTES_MAX_BYTES = 4096;       // user notes text: sent with every request

// ---- console and channels (SPEC §8) ----
export const CONSOLE_ASK_TIMEOUT_MS = 130_000;    // a console question waits this long: the LLM timeout plus a margin
export const CONSOLE_LINE_MAX_BYTES = 4096;       // longer input lines are refused
export const CONSOLE_OUTPUT_LINE_MAX_CHARS = 4096; // a printed answer's line longer than this goes on as more lines: the writer holds one line (and its bytes) at a time, not a 256 KiB one
export const CONSOLE_HISTORY_LINES = 32;          // lines recalled with the up arrow
export const CONSOLE_PENDING_LINES = 16;          // lines typed while a command runs; more are refused
export const CONSOLE_ESCAPE_MAX_BYTES = 16;       // a terminal escape sequence longer than this is garbage: dropped
export const CONSOLE_BAUD = 115200;               // the ESP32-S3 console UART's usual rate (ignored on lin)
export const CONSOLE_COLUMNS = 80;                // `help` fits its lines in this width: a serial monitor's usual
export const CONSOLE_HELP_USAGE_COLUMNS = 28;     // `help`'s usage column; a longer usage has its text on the next line
export const TELEGRAM_MESSAGE_MAX_CHARS = 4096;   // the Bot API's limit for one message's text
export const TELEGRAM_CHUNK_RESERVE_CHARS = 16;  // room kept in a chunk for a code fence closed and reopened across a split
export const TELEGRAM_POLL_TIMEOUT_S = 25;        // getUpdates long-poll wait: long enough to idle cheaply, under common proxy idle limits
export const TELEGRAM_POLL_TIMEOUT_MAX_S = 50;    // longest long poll a setting may ask for (Telegram holds a poll about a minute at most)
export const TELEGRAM_POLL_MARGIN_MS = 10_000;    // HTTP wait beyond the long-poll timeout before the poll counts as lost
export const TELEGRAM_UPDATES_LIMIT = 20;         // updates per getUpdates: a batch is handled before the next poll, so keep it small
export const TELEGRAM_CALL_TIMEOUT_MS = 30_000;   // one Bot API call other than getUpdates
export const TELEGRAM_BACKOFF_START_MS = 1_000;   // first wait after a network failure; doubles per failure
export const TELEGRAM_BACKOFF_MAX_MS = 60_000;    // longest wait between poll attempts while the network is down
export const TELEGRAM_RETRY_AFTER_MAX_S = 300;    // a 429's retry_after is honoured up to this; more is treated as this
export const TELEGRAM_SEND_RETRIES = 3;           // attempts of one outbound call through 429s and network errors
export const TELEGRAM_UPDATE_BODY_MAX_BYTES = 256 * 1024; // a getUpdates body larger than this is refused, not parsed: the channel reads fewer updates at a time, and skips one that alone is larger
export const TELEGRAM_UPDATE_HEAD_BYTES = 512;    // the start of a getUpdates answer read to learn the update_id of one update over the cap (Telegram writes update_id first)
export const TELEGRAM_POLL_MIN_INTERVAL_MS = 1_000; // a poll that brought nothing new starts at least this long after the one before: a server that answers at once (or poll_timeout_s 0) costs one request a second, not hundreds
export const TELEGRAM_TEXT_MAX_CHARS = 8192;      // an incoming message's text beyond this is cut (the Bot API's own limit is 4096)
export const TELEGRAM_EDIT_INTERVAL_MS = 1_000;   // a streamed reply is edited at most this often (Telegram flood limits)
export const TELEGRAM_TYPING_INTERVAL_MS = 4_000; // "typing" lasts 5 s on the client: renewed a little earlier
export const TELEGRAM_TYPING_MAX_MS = 180_000;    // typing stops after this even when no answer came (the LLM timeout plus a margin)
export const TELEGRAM_CHAT_SEND_INTERVAL_MS = 1_000; // outbound messages and edits to one chat: at most one per second (Bot API guidance)
export const TELEGRAM_CHAT_OUTBOX_MAX = 16;       // calls waiting for one chat beyond which progress (stage messages, previews) is skipped
export const TELEGRAM_CHAT_ANSWERS_MAX = 64;      // calls waiting for one chat beyond which an answer is dropped (logged): at one a second, a minute's backlog; a runaway loop cannot flood the chat
export const TELEGRAM_CHATS_TRACKED_MAX = 64;     // chats with requests in flight or streamed replies tracked at once
export const TELEGRAM_REQUESTS_PER_CHAT_MAX = 8;  // requests of one chat tracked for /stop; older ones are forgotten
export const CHANNEL_STOPPED_CHATS_MAX = 16;     // (every chat channel, channels/chat) chats whose /stop-ped requests' late events are still dropped; the oldest is forgotten
export const PAIRING_HINT_INTERVAL_MS = 600_000;  // (every chat channel, channels/pairing) an unpaired chat gets the pairing hint at most once per 10 minutes
export const PAIRING_HINTS_PER_HOUR = 30;        // pairing hints to all unpaired chats together, so strangers cannot make the board spend
export const PAIRING_UNPAIRED_TRACKED_MAX = 64;  // unpaired chats remembered for the hint limit; the oldest is forgotten
export const PAIRING_CODE_TTL_MS = 600_000; // a pairing code printed on the console works for 10 minutes
export const PAIRING_CODE_CHARS = 8;        // pairing code length (31 symbols: about 40 bits)
export const PAIRING_ATTEMPTS_MAX = 5;      // wrong /pair codes one chat may send at once; then its guesses are slowed (the code stays valid for the others)
export const PAIRING_GUESS_DELAY_MS = 60_000;      // a chat past its wrong codes waits this long before its next one is read; doubles with each further wrong one
export const PAIRING_GUESS_DELAY_MAX_MS = 3_600_000; // ... up to an hour
export const PAIRING_GUESSERS_TRACKED_MAX = 256;   // chats whose wrong codes are remembered; past this the oldest one not waiting is forgotten
export const PAIRING_CHATS_MAX = 16;      // paired chats: the owner and a few users
export const TELEGRAM_PAIRING_FILE_MAX_BYTES = 8 * 1024; // the paired-chats file; larger on open is damaged
export const QQ_TOKEN_REFRESH_MARGIN_MS = 50_000; // refresh the app access token this long before it expires (QQ hands out a new one only in its last 60 s)
export const QQ_TOKEN_REFRESH_MIN_MS = 1_000;    // the soonest a refresh is scheduled, so a tiny expires_in cannot spin
export const QQ_TOKEN_LIFE_MAX_S = 7_200;        // expires_in above this (QQ's documented lifetime) is taken as this
export const QQ_CALL_TIMEOUT_MS = 15_000;        // one QQ OpenAPI call (QQ advises at least 5 s for message sends)
export const QQ_BODY_MAX_BYTES = 16 * 1024;      // a token, /gateway or send answer is a few hundred bytes; more is refused
export const QQ_BACKOFF_START_MS = 1_000;        // first wait after a failed connection; doubles per failure
export const QQ_BACKOFF_MAX_MS = 60_000;         // longest wait between connection attempts
export const QQ_HELLO_TIMEOUT_MS = 15_000;       // after the WebSocket opens, this long for Hello (op 10) and then for READY/RESUMED
export const QQ_HEARTBEAT_MIN_MS = 1_000;        // a heartbeat_interval below this is taken as this (no busy heartbeat from a bad Hello)
export const QQ_HEARTBEAT_MAX_MS = 120_000;      // above this too (QQ's is 41.25-45 s)
export const QQ_PAYLOAD_MAX_BYTES = 64 * 1024;   // one gateway payload: a message event is a few KB; the WebSocket's own cap is larger
export const QQ_MESSAGE_MAX_CHARS = 2_000;       // one reply's content: QQ documents no figure, so a conservative one; longer answers are split
export const QQ_REPLIES_PER_MESSAGE_MAX = 5;     // QQ: a received message may be answered (passively) at most 5 times
export const QQ_C2C_REPLY_WINDOW_MS = 3_600_000; // QQ: a C2C message may be replied to for 60 minutes
export const QQ_GROUP_REPLY_WINDOW_MS = 300_000; // QQ: a group @ message for 5 minutes
export const QQ_REPLY_WINDOW_MARGIN_MS = 5_000;  // a reply is not tried this close to the window's end (it would arrive late)
export const QQ_RECENT_MESSAGES_PER_CHAT = 8;    // received messages kept per chat to reply to; older ones are forgotten
export const QQ_SEEN_IDS_MAX = 256;              // message ids remembered to drop QQ's rare repeated deliveries
export const QQ_SEND_RETRIES = 3;               // attempts of one reply through network errors and 5xx (the same msg_seq each time)
export const QQ_STATE_FILE_MAX_BYTES = 8 * 1024; // qq/state.json (the paired chats); larger on open is damaged
export const QQ_CHATS_TRACKED_MAX = 64;          // chats with reply targets, requests or replies in flight tracked at once
export const QQ_CHAT_OUTBOX_MAX = 8;             // answers waiting to go to one chat (each at most 5 replies); more are dropped
export const QQ_REQUESTS_PER_CHAT_MAX = 8;       // requests of one chat tracked for /stop; older ones are forgotten
export const QQ_SEND_RETRY_START_MS = 1_000;     // wait before a reply's second attempt; the third waits twice as long
export const QQ_TEXT_MAX_CHARS = 8_192;          // an incoming message's content beyond this is cut
export const ROUTER_SUBMIT_WAIT_MS = 5_000;       // a routed message waits this long for room in the agent's queue
export const ROUTER_RULES_MAX = 32;               // rules in router/rules.json
export const ROUTER_RULES_FILE_MAX_BYTES = 16 * 1024; // the rules file; larger is refused with a sentence
export const ROUTER_PATTERN_MAX_CHARS = 200;      // a rule's text pattern: short patterns keep matching cheap
export const ROUTER_TEXT_MAX_CHARS = 4096;        // a rule's reply or request text
export const FACTORY_RESET_MAX_ENTRIES = 10_000;   // files and directories factory-reset deletes at most: far more than the stores keep

// ---- logging ----
export const LOG_SECRETS_MAX = 16;                // secret values masked in log lines (the declared secret settings)
export const LOG_MASK_DEPTH_MAX = 32;              // a value's nesting walked string by string when its secrets are masked (no message nests so deep); deeper parts are masked as JSON text
export const LOG_SECRET_MIN_CHARS = 6;            // shorter values are not masked: masking "1" would garble every number

// ---- config (key-value) ----
export const CONFIG_KEY_MAX_CHARS = 15;           // NVS key names are at most 15 characters
export const CONFIG_NAME_MAX_CHARS = 48;          // dotted config names; stored under a hashed key that fits NVS
export const CONFIG_KEY_PROBES = 4;               // hashed keys tried per name when two names collide
export const CONFIG_MAX_ENTRIES = 64;             // keeps the config namespace within a few NVS pages
export const CONFIG_VALUE_MAX_BYTES = 1024;       // well under NVS's ~4000-byte value limit
export const CONFIG_SHOWN_VALUE_MAX_CHARS = 40;     // a refused value is quoted back at most this long
export const KV_LOG_BYTES = 4096;                 // lin key-value: a namespace file's zeroed tail where writes are appended (one fdatasync each); full, the next write rewrites the file (hosts/lin/src/keyvalue.c)
export const NET_OUTPUT_BYTES = 64 * 1024;          // lin sockets (hosts/lin/src/tcp.c, TCP and TLS): bytes JS may queue before onWritable; an LLM request body (a full 48 KiB window's is ~50 KB) goes in one write and one send

// ---- memory pools (lin host emulation of the ESP32-S3) ----
export const INTERNAL_RAM_BYTES = 320 * 1024;     // the ESP32-S3's on-chip RAM left to the app (hosts/lin/src/buffers.c, tested)
export const PSRAM_BYTES = 8 * 1024 * 1024;       // the PSRAM of the boards we target (hosts/lin/src/buffers.c, tested)

// ---- workers (the `worker` module; hosts/lin/src/worker.c reads these through build/lin/budgets.h) ----
export const WORKER_QUEUE_MESSAGES = 64;          // messages waiting in one direction between two machines; a burst of stream events fits
export const WORKER_QUEUE_BYTES = 1024 * 1024;    // marshalled bytes waiting in one direction; also the largest single message
export const WORKER_QUEUE_WAIT_MS = 1000;         // postMessage waits this long for room, then throws (the SDK's debug task.queueWait)
export const WORKER_DELIVER_MARGIN_BYTES = 16 * 1024; // a received message is demarshalled without collecting: the heap collects first unless twice its size plus this is free
export const WORKER_TERMINATE_WAIT_MS = 1000;     // terminate() waits this long for the worker to finish its turn; one still busy is ended by its meter within WORKER_METER_INTERVAL
export const WORKER_METER_INTERVAL = 1_000_000;   // meter units between two checks of whether a worker machine was terminated (lin worker.c): ~10 ms of a tight loop; a check costs ~0.1 us

// ---- capabilities: tools, scheduler, skills, macros, scripts (modules/agent/caps, sched, skills) ----
export const CAPS_TIME_ZONES_CACHED = 8;        // time zones get_time keeps parsed, by name: a conversation asks in one or a few
export const CAPS_OFFER_CACHE_MAX = 16;         // tool lists kept per (role, visible groups, macros): a few roles x skills
export const GPIO_PIN_MAX = 48;                // ESP32-S3 GPIO 0..48
export const I2C_HZ_MIN = 10_000;              // i2c.hz: below this a bus is slower than any sensor wants
export const I2C_HZ_MAX = 1_000_000;           // i2c.hz: Fast-mode Plus, the ESP32-S3's fastest
export const I2C_TRANSFER_MAX_BYTES = 32;      // one i2c_read or i2c_write: a sensor's frame or an EEPROM page
export const I2C_DELAY_MAX_MS = 100;           // i2c_read waits at most this between the register write and the read (a measurement's conversion)
export const I2C_TIMEOUT_MS = 50;              // one I2C transfer waits this long for a held clock (the SDK's timeout option): a bus held low fails fast
export const ADC_SAMPLES_MAX = 64;             // adc_read averages at most this many samples: 64 x 12 bits fits a small integer, and a few ms
export const PWM_HZ_MIN = 20;                  // pwm_set: the ESP32-S3's LEDC needs 17 Hz at 10 bits; 20 keeps a margin
export const PWM_HZ_MAX = 40_000;              // pwm_set: 80 MHz / 2^10 is 78 kHz; 40 kHz covers motors, LEDs and buzzers
export const PWM_RESOLUTION_BITS = 10;         // pwm_set's duty steps (1024): enough for dimming, and every frequency above fits
export const PWM_OUTPUTS_MAX = 4;              // PWM outputs the agent may run at once (the LEDC has 8 channels, 4 timers)
export const UART_TRANSFER_MAX_BYTES = 1024;   // one uart_write or uart_read: a tool result stays small
export const UART_TIMEOUT_MAX_MS = 5_000;      // uart_read waits at most this for bytes: the agent's turn is blocked meanwhile
export const UART_POLL_MS = 10;                // uart_read looks for arrived bytes this often while it waits
export const UART_BAUD_MIN = 300;              // uart.baud: the slowest rate a UART device still uses
export const UART_BAUD_MAX = 5_000_000;        // uart.baud: the ESP32-S3 UART's fastest
export const UART_RX_BUFFER_BYTES = 2048;      // bytes received and not yet read that the lin loopback keeps (the board keeps its 128-byte hardware FIFO: caps/NOTES.md)
export const PWM_RECORDS_MAX = 64;             // the lin host's simulated PWM keeps this many of its newest writes (host/io simulation)
export const IO_DEVICES_FILE_MAX_BYTES = 16 * 1024; // io/devices.json, the lin host's simulated devices: a few dozen entries
export const FILES_FILE_MAX_BYTES = 64 * 1024; // one file in the agent's folder: read and written whole, in the JS heap
export const FILES_MAX_COUNT = 64;             // files in the agent's folder
export const FILES_TOTAL_MAX_BYTES = 1024 * 1024; // the agent's folder on flash: a tenth of the storage partition
export const FILES_READ_MAX_BYTES = 8 * 1024;  // file_read returns at most this from an offset: half a tool result
export const SCHED_ENTRIES_MAX = 16;           // schedules kept; each may fire a request, so few
export const SCHED_MIN_INTERVAL_S = 60;        // an interval schedule fires at most once a minute: no flooding a chat or the LLM quota
export const SCHED_CATCH_UP_MS = 6 * 3600_000; // after a reboot a missed entry fires once if its time passed at most this long ago, else it is skipped
export const SCHED_TICK_MAX_MS = 60_000;       // the scheduler looks at the clock at least this often (a clock set late by SNTP)
export const SCHED_CRON_SEARCH_DAYS = 366 * 8 + 2; // next cron time searched this far ahead: Feb 29 on a given weekday recurs within 28 years, but any valid expression without both day fields within 8
export const SCHED_TEXT_MAX_CHARS = 1000;      // a schedule's request text: an instruction, not a document
export const SCHED_FILE_MAX_BYTES = 32 * 1024; // sched/schedules.json: 16 entries of ~1.5 KiB; larger is damage
export const SCHED_SUBMIT_TIMEOUT_MS = 30_000; // a firing waits this long for room in the request queue, then is dropped (logged)
export const SKILLS_MAX = 16;                  // skills in the catalogue (one system-prompt line each)
export const SKILL_DOC_MAX_BYTES = 8 * 1024;   // one skill document: it becomes a tool result
export const SKILL_SESSIONS_MAX = 16;          // sessions whose activated tool groups are remembered (oldest forgotten)
export const MACROS_MAX = 8;                   // macro tools, as zclaw's custom tools: each is sent with every request
export const MACRO_ACTION_MAX_CHARS = 1000;    // a macro's stored action
export const MACRO_DESCRIPTION_MAX_CHARS = 200; // a macro's tool description
export const MACROS_FILE_MAX_BYTES = 16 * 1024; // caps/macros.json: 8 macros of ~1.2 KiB; larger is damage
export const SCRIPT_SOURCE_MAX_CHARS = 4000;   // a script's source: a snippet, not a program
export const SCRIPT_MAX_STEPS = 5_000_000;     // XS meter units (bytecodes, calls, allocations) of one script: about 0.1-0.3 s on lin
export const SCRIPT_MAX_CHUNK_BYTES = 256 * 1024; // chunk heap a script may add (strings, arrays), after a collection
export const SCRIPT_MAX_SLOTS = 8192;          // slots a script may add (objects, values): 256 KiB at 32 bytes on lin
export const SCRIPT_RESULT_MAX_CHARS = 4000;   // a script's result text
export const SCRIPT_METER_INTERVAL = 500;      // meter units between two checks of a script's bounds (host/sandbox): a bound is met within this many steps, a check costs ~0.1 us
export const SCRIPT_STACK_MAX_SLOTS = 1024;    // JS stack slots a script may use (recursion): with one interval's overshoot well inside the agent machine's 4096
export const SCRIPT_MAX_KEYS = 128;            // new property names a script may make: lin's XS 13.3 never frees one (the board's XS 17 does)
export const SCRIPT_KEYS_RESERVE = 256;        // lin: a script does not start when fewer names than this are free (the agent machine has ~1,000 free after boot), so the firmware keeps room for its own
export const SCRIPTS_MAX = 16;                 // stored scripts (automations) the owner keeps; each may hold a pin's edge or a schedule
export const SCRIPT_NAME_MAX_CHARS = 32;       // a stored script's name: lowercase letters, digits and _
export const SCRIPT_DESCRIPTION_MAX_CHARS = 200; // what a stored script is for, one line
export const SCRIPT_TRIGGERS_MAX = 4;          // triggers of one stored script besides schedules (boot, router, gpio edges)
export const SCRIPTS_FILE_MAX_BYTES = 96 * 1024; // caps/scripts.json: 16 scripts of ~4.5 KiB; larger is damage
export const SCRIPT_FAILURES_DISABLE = 3;      // a stored script that fails this many runs in a row is disabled (and its chat told)
export const SCRIPT_NOTIFIES_PER_RUN = 3;      // notify() calls one run may make; more return false
export const SCRIPT_NOTIFIES_PER_MINUTE = 6;   // notify() messages all scripts may send one chat in a minute; more are dropped and counted
export const SCRIPT_NOTIFY_MAX_CHARS = 1000;   // one notify() text; longer is cut
export const SCRIPT_ASKS_PER_HOUR = 10;        // ask() requests (an LLM call each) one script may make in an hour; more return false
export const SCRIPT_RUNS_PER_MINUTE = 60;      // runs of one stored script in a minute; a trigger past it (a bouncing pin) is skipped and counted
export const SCRIPT_ASK_SUBMIT_TIMEOUT_MS = 10_000; // an ask() waits this long for room in the agent's queue, then is dropped (counted)
export const SCRIPT_YIELD_MS = 100;            // on the board a running script lets the idle task run (a tick) at least this often: the task watchdog watches it

// ---- the board's network (Wi-Fi, DNS, SNTP; hosts/esp32, modules/main/wifi) ----
export const DNS_FALLBACK_SERVERS = ["1.1.1.1", "8.8.8.8"] as const; // asked when DHCP gave no DNS server
export const WIFI_RECONNECT_FIRST_MS = 1_000;    // first retry after losing or failing to join the network
export const WIFI_RECONNECT_MAX_MS = 60_000;     // back-off doubles up to this: a lost AP is not hammered
export const WIFI_SCAN_MAX_RESULTS = 20;         // `wifi scan` lists the strongest this many
export const WIFI_SSID_MAX_BYTES = 32;           // 802.11's SSID limit
export const WIFI_PASSWORD_MIN_BYTES = 8;        // WPA2-PSK passphrases are 8..63 characters ("" = an open network)
export const WIFI_PASSWORD_MAX_BYTES = 63;
export const SNTP_SERVER = "pool.ntp.org";       // the clock's source before the first TLS connection
export const SNTP_RETRY_MS = 10_000;             // a failed time request is tried again after this
export const ONLINE_WAIT_MAX_MS = 30_000;        // a name lookup waits this long for Wi-Fi and the clock, then fails
export const CLOCK_VALID_AFTER_MS = 1_767_225_600_000; // 2026-01-01: a wall clock before this has not been set (certificates cannot be checked)
export const ONLINE_WAITERS_MAX = 8;              // lookups held for the network at once; more fail at once

// ---- the HTTP server and the web console (modules/main/httpd, channels/web; issue 30) ----
export const WEB_PORT_DEFAULT = 80;             // the board's web console (setting web.port); lin serves only with --http PORT
export const WEB_LISTEN_BACKLOG = 8;            // connections the kernel holds before we accept them (listener)
export const WEB_CONNECTIONS_MAX = 16;          // open connections at once; a new one past this closes the oldest still waiting for a request (a slow or idle client), or is refused with 503
export const WEB_HEAD_START_BYTES = 1024;       // a connection's request-head buffer at first; doubles up to WEB_HEAD_MAX_BYTES
export const WEB_HEAD_MAX_BYTES = 8 * 1024;     // request line + headers; more is 431
export const WEB_TARGET_MAX_CHARS = 2048;       // request target (path and query); longer is 414
export const WEB_HEADERS_MAX = 48;              // header lines of one request; more is 431
export const WEB_BODY_MAX_BYTES = 16 * 1024;    // a request body when the route names no other limit (forms, JSON); more is 413
export const WEB_BODY_LIMIT_MAX_BYTES = 64 * 1024; // the largest body limit a route may ask for
export const WEB_HEAD_TIMEOUT_MS = 10_000;      // a request head must arrive whole within this of its first byte (slow clients)
export const WEB_IDLE_TIMEOUT_MS = 15_000;      // a connection with no request (new, or kept alive after one) is closed after this
export const WEB_BODY_TIMEOUT_MS = 20_000;      // a request body must arrive whole within this of its head
export const WEB_WRITE_STALL_MS = 20_000;       // a response whose bytes the client stops taking for this long is dropped with its connection
export const WEB_HANDLER_TIMEOUT_MS = 150_000;  // a route that has not answered by then gets 503 (an ask waits up to 130 s)
export const WEB_REQUESTS_PER_CONNECTION = 100; // requests one kept-alive connection serves before it is closed
export const WEB_OUTPUT_MAX_BYTES = 64 * 1024;  // bytes a response or stream may have queued for a slow client; a stream past this is dropped
export const WEB_STREAMS_MAX = 4;               // SSE streams open at once (chat replies, the log tail); more get 503
export const WEB_TICK_MS = 1_000;               // the server's one timer checks every connection's deadlines this often
export const WEB_ROUTES_MAX = 64;               // routes registered on the server (pages, APIs, /mcp)

// ---- MCP: remote tools (client, modules/agent/mcp) and the board's tools offered (server, modules/main/mcp) ----
export const MCP_SERVERS_MAX = 4;               // mcp.servers entries: each holds a session and may hold a listening stream (a socket, ~40 KB of TLS on the board)
export const MCP_SERVER_NAME_MAX_CHARS = 16;    // a server's name prefixes its tools (NAME__tool within the 64 characters of a tool name)
export const MCP_TOOLS_MAX = 24;                // remote tools offered, all servers together: every definition is sent with every request
export const MCP_TOOLS_PAGES_MAX = 8;           // tools/list pages followed (nextCursor); a server paging on past this is cut there
export const MCP_TOOL_DESCRIPTION_MAX_CHARS = 1024; // a remote tool's description as offered; longer is cut
export const MCP_TOOL_SCHEMA_MAX_BYTES = 8 * 1024; // a remote tool's input schema as JSON; a bigger one leaves the tool out
export const MCP_MESSAGE_MAX_BYTES = 128 * 1024; // one JSON-RPC message (a body or an SSE event): a tool result is cut to 16 KiB anyway
export const MCP_STREAM_MAX_BYTES = 1024 * 1024; // all the bytes of one reply stream (notifications before the answer); more ends it
export const MCP_JSON_DEPTH_MAX = 64;           // nesting of a JSON-RPC message, checked before JSON.parse recurses
export const MCP_ERROR_MESSAGE_MAX_CHARS = 400; // a JSON-RPC error's message as quoted to the model or a person
export const MCP_SESSION_ID_MAX_CHARS = 256;    // an Mcp-Session-Id (visible ASCII); longer is refused
export const MCP_CONNECT_TIMEOUT_MS = 10_000;   // DNS + TCP + TLS to a server: a tool call should not wait long on a dead one
export const MCP_REQUEST_TIMEOUT_MS = 30_000;   // initialize, tools/list: a whole request, start to last byte
export const MCP_CALL_TIMEOUT_MS = 60_000;      // one tools/call, start to its answer: the model waits on it inside a turn
export const MCP_NOTIFY_TIMEOUT_MS = 5_000;     // a notification (initialized, cancelled) or a session's DELETE: the server answers 202 at once
export const MCP_LISTEN_MS = 300_000;           // a listening GET stream (notifications/tools/list_changed) is opened again after this
export const MCP_RETRY_MS = 30_000;             // a server that failed (down, bad token, garbage) is tried again after this, or at its next call
export const MCP_TOKENS_MAX = 8;                // mcp.tokens entries: the board's server knows this many clients
export const MCP_TOKEN_MIN_CHARS = 16;          // a token of the board's server: a guessable one is refused when set
export const MCP_SERVER_SESSIONS_MAX = 8;       // sessions the board's MCP server keeps; a new one past this ends the least recently used
export const MCP_SERVER_CALLS_PER_MINUTE = 30;  // tools/call one token may make a minute: a client in a loop cannot drive pins or fill the log
export const MCP_SERVER_CALLS_IN_FLIGHT = 4;    // calls of one token running at once (each holds an agent port call)
export const MCP_SERVER_AUTH_FAILURES_PER_MINUTE = 20; // requests without a valid token answered 401 a minute; more get 429 (no guessing at speed)
export const MCP_IMAGES_PER_RESULT_MAX = 2;     // images of one remote tool result looked at through the vision path (each one model call); more are described only
export const WEB_LOGIN_CODE_CHARS = 8;          // a web login code: 31^8 ≈ 8.5e11 codes, 5 tries each
export const WEB_LOGIN_CODE_TTL_MS = 10 * 60_000; // a login code works this long, once
export const WEB_LOGIN_FAILURES_MAX = 5;        // wrong codes before the code is void and logins lock
export const WEB_LOGIN_LOCKOUT_MS = 5 * 60_000; // logins refused this long after too many wrong codes
export const WEB_LOGIN_FAIL_DELAY_MS = 1_000;   // a wrong code's answer waits this long (brute force is slowed)
export const WEB_SESSION_TOKEN_BYTES = 32;      // random bytes of a session cookie
export const WEB_CSRF_TOKEN_BYTES = 16;         // random bytes of a CSRF token (a new one after every change)
export const WEB_SESSION_TTL_MS = 12 * 3_600_000; // a web session's life (the cookie's Max-Age)
export const WEB_SESSIONS_MAX = 4;              // web sessions at once; a fifth login ends the oldest
export const WEB_AP_PASSWORD_CHARS = 12;        // the setup network's WPA2 password: 54^12 ≈ 6e20, random per board, kept in NVS
export const WEB_CHAT_TEXT_MAX_CHARS = 4000;    // one message typed in the web chat
export const WEB_LOG_TAIL_LINES = 100;          // log lines the web console's log page shows (kept in the main machine once the server runs)
export const WEB_ASSETS_MAX_BYTES = 16 * 1024;  // the web console's page, style and script together, in the image
export const WEB_DNS_PORT = 53;                 // the setup network's captive-portal DNS on the board (lin: a port the system picks, on 127.0.0.1)
export const WEB_DNS_TTL_S = 30;                // how long a phone keeps a captive or mDNS answer (short: the setup network goes once the board is online)
export const WEB_DNS_QUERY_MAX_BYTES = 512;     // a DNS query answered (classic UDP size); longer ones are dropped
export const WEB_DNS_NAME_MAX_BYTES = 255;      // a query's name, its length bytes included; a longer one is dropped
export const WEB_AP_MAX_STATIONS = 4;           // phones on the setup network at once (the SDK's default)

// ---- TLS sockets (hosts/lin/src/tls.c and the board's hosts/esp32/tls/tls_esp32.c read these through budgets.h) ----
export const TLS_HANDSHAKE_MS = 30_000;          // a handshake not done by then has stalled (real servers answer in seconds); secure.handshakeTimeout may say otherwise
export const TLS_HANDSHAKE_MAX_MS = 600_000;     // the longest secure.handshakeTimeout accepted
export const TLS_POLL_MS = 10;                   // the board's TLS socket looks for progress this often (one Moddable timer each): far below the network's latency
export const TLS_INPUT_BYTES = 16 * 1024;        // the board's TLS socket reads this far ahead of JS (PSRAM): a TLS record's plaintext; JS queues up to NET_OUTPUT_BYTES, as on lin

// ---- the board's sockets: lwIP's CONFIG_LWIP_MAX_SOCKETS (hosts/esp32/sdkconfig.defaults) covers all of these at once; npm run check:device checks it in the generated sdkconfig.h ----
export const SOCKETS_LLM_MAX = 1 + MAX_SUBAGENTS + HTTP_POOL_IDLE_PER_ORIGIN; // one LLM call per core (the root and each subagent) in flight, and the keep-alives the pool keeps
export const SOCKETS_TELEGRAM_MAX = 2 + HTTP_POOL_IDLE_PER_ORIGIN; // the long poll, a send, and the keep-alives
export const SOCKETS_QQ_MAX = 2 + HTTP_POOL_IDLE_PER_ORIGIN; // the gateway's WebSocket, a REST call (token or send), and the keep-alives
export const SOCKETS_DNS_MAX = 1;                // the resolver's UDP socket
export const SOCKETS_SNTP_MAX = 1;               // the clock's time request
export const SOCKETS_WEB_MAX = 1 + WEB_CONNECTIONS_MAX; // the web console's listening socket and its connections
export const SOCKETS_MCP_MAX = 2 * MCP_SERVERS_MAX; // per MCP server, a call and its listening stream
export const SOCKETS_MAX = SOCKETS_LLM_MAX + SOCKETS_TELEGRAM_MAX + SOCKETS_QQ_MAX + SOCKETS_DNS_MAX + SOCKETS_SNTP_MAX + SOCKETS_WEB_MAX + SOCKETS_MCP_MAX; // 41 with today's figures
export const SOCKETS_TCP_MAX = SOCKETS_MAX - SOCKETS_DNS_MAX - SOCKETS_SNTP_MAX - 1; // of them TCP connections (lwIP's CONFIG_LWIP_MAX_ACTIVE_TCP), the web listener apart
