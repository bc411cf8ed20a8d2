/* Frames that are not JSON-RPC messages (mcpp_engine_unreadable,
 * mcpp_unreadable_text): counted, the first one's opening kept, every one
 * still forwarded, and the sentence a handshake that times out adds shows
 * what cannot be seen (a byte order mark, controls, a cut character). */
#include "engine_fixture.h"

static const char init[] =
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
    "{\"protocolVersion\":\"2025-11-25\"}}";

/* The sentence for count lines, the first of len bytes, and no tail. */
static size_t lines_text(uint64_t count, const char *first, size_t len, char *out,
                         size_t cap) {
  mcpp_unreadable what = {count, first, len, 0, NULL, 0};
  return mcpp_unreadable_text("the server", &what, out, cap);
}

/* The engine's own sentence (mcpp_engine_unreadable_text). */
static const char *text_of(fx *f, char *out, size_t cap) {
  mcpp_engine_unreadable_text(f->e, out, cap);
  return out;
}

TEST(unreadable_frames_are_counted_and_the_first_is_kept) {
  fx *f = fx_new();
  fx_start(f, T0);
  fx_out(f, init, T0);
  char t[512];
  ASSERT_EQ(mcpp_engine_unreadable(f->e, NULL, NULL), 0);
  ASSERT_STR_EQ(text_of(f, t, sizeof t), "");
  /* JSON-RPC of every kind is no unreadable line: a notification, an
   * answer with a null id, a message without "jsonrpc". */
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}", T0),
            MCPP_RECV_FORWARD);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
                       "\"message\":\"Parse error\"}}", T0),
            MCPP_RECV_FORWARD);
  ASSERT_EQ(fx_recv(f, "{\"id\":99,\"result\":{}}", T0), MCPP_RECV_FORWARD);
  ASSERT_EQ(mcpp_engine_unreadable(f->e, NULL, NULL), 0);
  /* A log line, then a JSON log record: both forwarded, both counted. */
  ASSERT_EQ(fx_recv(f, "Starting \"demo\" server\t\x01", T0), MCPP_RECV_FORWARD);
  ASSERT_STR_EQ(text_of(f, t, sizeof t),
                "the server wrote a line that is not JSON-RPC: "
                "\"Starting \\\"demo\\\" server\\t\\u0001\"");
  ASSERT_EQ(fx_recv(f, "{\"level\":30,\"msg\":\"listening\"}", T0), MCPP_RECV_FORWARD);
  ASSERT_EQ(mcpp_engine_unreadable(f->e, NULL, NULL), 2);
  ASSERT_STR_EQ(text_of(f, t, sizeof t),
                "the server wrote 2 lines that are not JSON-RPC, the first: "
                "\"Starting \\\"demo\\\" server\\t\\u0001\"");
  /* The handshake still passes when its answer comes. */
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":"
                       "\"2025-11-25\",\"serverInfo\":{\"name\":\"s\"}}}", T0),
            MCPP_RECV_FORWARD);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", T0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_INITIALIZED), 1);
  fx_done(f);
}

TEST(unreadable_text_names_a_byte_order_mark_and_a_batch) {
  char t[512];
  static const char bom[] =
      "\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":"
      "\"2025-11-25\"}}";
  ASSERT_STR_EQ((lines_text(1, bom, 65, t, sizeof t), t),
                "the server wrote a line that is not JSON-RPC (it starts with a "
                "byte order mark): \"\\ufeff{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":0,"
                "\\\"result\\\":{\\\"protocolVersion\\\":\\\"2025-11-...\"");
  static const char batch[] = "[{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}]";
  ASSERT_STR_EQ((lines_text(3, batch, strlen(batch), t, sizeof t), t),
                "the server wrote 3 lines that are not JSON-RPC, the first (a "
                "JSON-RPC batch: MCP has had none since 2025-06-18): "
                "\"[{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":0,\\\"result\\\":{}}]\"");
  /* A log line that starts with a bracket is no batch. */
  ASSERT_STR_EQ((lines_text(1, "[INFO] up", 9, t, sizeof t), t),
                "the server wrote a line that is not JSON-RPC: \"[INFO] up\"");
}

TEST(unreadable_text_keeps_utf8_and_escapes_what_is_not) {
  char t[512];
  /* é stays; a stray byte shows as \x; a character cut at 64 bytes goes. */
  ASSERT_STR_EQ((lines_text(1, "d\xc3\xa9marr\xff", 8, t, sizeof t), t),
                "the server wrote a line that is not JSON-RPC: \"d\xc3\xa9marr\\xff\"");
  /* A surrogate and an overlong form are not UTF-8 either. */
  ASSERT_STR_EQ((lines_text(1, "\xed\xa0\x80\xc0\xaf", 5, t, sizeof t), t),
                "the server wrote a line that is not JSON-RPC: \"\\xed\\xa0\\x80\\xc0\\xaf\"");
  char cut[65];
  memset(cut, 'a', 63);
  cut[63] = '\xc3'; /* the first byte of é, the 64th shown */
  cut[64] = '\xa9';
  ASSERT_STR_EQ((lines_text(1, cut, 65, t, sizeof t), t),
                "the server wrote a line that is not JSON-RPC: "
                "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\"");
  /* Cut to a small buffer: snprintf's contract. */
  char small[16];
  size_t n = lines_text(1, "x", 1, small, sizeof small);
  ASSERT_EQ(n, strlen("the server wrote a line that is not JSON-RPC: \"x\""));
  ASSERT_STR_EQ(small, "the server wrot");
  ASSERT_EQ(lines_text(0, "x", 1, small, sizeof small), 0);
  ASSERT_STR_EQ(small, "");
  ASSERT_EQ(mcpp_engine_unreadable(NULL, NULL, NULL), 0);
}

TEST(unreadable_keeps_the_first_frame_not_the_last) {
  fx *f = fx_new();
  fx_start(f, T0);
  char big[300];
  memset(big, 'x', sizeof big);
  ASSERT_EQ(mcpp_engine_recv(f->e, big, sizeof big, T0), MCPP_RECV_FORWARD);
  ASSERT_EQ(fx_recv(f, "later", T0), MCPP_RECV_FORWARD);
  const char *first = NULL;
  size_t len = 0;
  ASSERT_EQ(mcpp_engine_unreadable(f->e, &first, &len), 2);
  ASSERT_EQ(len, 65);
  ASSERT_EQ(memcmp(first, big, 65), 0);
  fx_done(f);
}

TEST(unreadable_text_names_bytes_that_no_newline_ends) {
  char t[512];
  static const char answer[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}";
  mcpp_unreadable tail = {0, NULL, 0, strlen(answer), answer, strlen(answer)};
  ASSERT_STR_EQ((mcpp_unreadable_text("the server", &tail, t, sizeof t), t),
                "the server wrote 36 bytes that no newline ends: "
                "\"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":0,\\\"result\\\":{}}\"");
  /* Lines and a tail; a tail kept short of its count is cut with "...". */
  char body[65];
  memset(body, 'b', sizeof body);
  mcpp_unreadable both = {2, "Content-Length: 146", 19, 146, body, sizeof body};
  ASSERT_STR_EQ((mcpp_unreadable_text("the server", &both, t, sizeof t), t),
                "the server wrote 2 lines that are not JSON-RPC, the first: "
                "\"Content-Length: 146\", then 146 bytes that no newline ends: "
                "\"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb...\"");
  mcpp_unreadable one = {0, NULL, 0, 1, "{", 1};
  ASSERT_STR_EQ((mcpp_unreadable_text("the server", &one, t, sizeof t), t),
                "the server wrote 1 byte that no newline ends: \"{\"");
  mcpp_unreadable none = {0, NULL, 0, 0, NULL, 0};
  ASSERT_EQ(mcpp_unreadable_text("the server", &none, t, sizeof t), 0);
  ASSERT_STR_EQ(t, "");
  ASSERT_EQ(mcpp_unreadable_text("the server", NULL, t, sizeof t), 0);
}

TEST(unreadable_engine_text_speaks_of_messages_off_stdio_and_of_the_client_as_server) {
  /* Streamable HTTP: the frames are events and bodies, not lines. */
  fx *f = fx_new();
  f->s.transport = MCPP_TRANSPORT_STREAMABLE_HTTP;
  fx_start(f, T0);
  char t[256];
  ASSERT_EQ(mcpp_engine_unreadable_text(f->e, t, sizeof t), 0);
  ASSERT_STR_EQ(t, "");
  ASSERT_EQ(fx_recv(f, "\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", T0),
            MCPP_RECV_FORWARD);
  ASSERT_STR_EQ(text_of(f, t, sizeof t),
                "the server sent a message that is not JSON-RPC (it starts with a byte order "
                "mark): \"\\ufeff{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":1,\\\"result\\\":{}}\"");
  ASSERT_EQ(fx_recv(f, "oops", T0), MCPP_RECV_FORWARD);
  ASSERT(strncmp(text_of(f, t, sizeof t), "the server sent 2 messages that are not JSON-RPC, "
                                          "the first (it starts", 67) == 0);
  fx_done(f);
  /* The server role: its peer is the client, on stdio it wrote lines. */
  f = fx_new();
  f->s.role = MCPP_ROLE_SERVER;
  fx_start(f, T0);
  ASSERT_EQ(fx_recv(f, "hello", T0), MCPP_RECV_FORWARD);
  ASSERT_STR_EQ(text_of(f, t, sizeof t), "the client wrote a line that is not JSON-RPC: \"hello\"");
  fx_done(f);
}
