/* A call in flight shortens the wait (issue 24 item 2): with a request of
 * the application awaiting an answer, the server's silence for the ping
 * timeout brings the keepalive probe forward (ping, or server/discover on
 * 2026-07-28) instead of waiting out the interval; with nothing in flight
 * keepalive keeps its interval. Settings are wrap's defaults: interval
 * 10 s, timeout 5 s, failures 3. */
#include "engine_fixture.h"

static fx *wrap_defaults(int observe_process) {
  fx *f = fx_new();
  f->s.interval_ms = 10000;
  f->s.timeout_ms = 5000;
  f->s.failures = 3;
  f->s.jitter_pct = 0;
  f->observe_process = observe_process;
  f->feed_cpu = observe_process;
  return f;
}

/* A legacy session (initialize, 2025-11-25) at T0. */
static fx *legacy(int observe_process) {
  fx *f = wrap_defaults(observe_process);
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
            "{\"protocolVersion\":\"2025-11-25\"}}", T0);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":"
                       "\"2025-11-25\",\"serverInfo\":{\"name\":\"legacy\"}}}", T0),
            MCPP_RECV_FORWARD);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", T0);
  return f;
}

static const char call[] =
    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}";

static uint64_t first_sent_at(fx *f, int kind, uint64_t from, uint64_t until) {
  for (uint64_t t = from; t <= until; t += 10 * MS) {
    fx_run_until(f, t);
    if (fx_count_sent(f, kind) > 0) return t;
  }
  return 0;
}

TEST(request_in_flight_and_silence_for_the_timeout_sends_a_ping_at_that_moment) {
  fx *f = legacy(0);
  /* Sent 1 s after the server's last byte: the silence runs from the call. */
  ASSERT_EQ(fx_out(f, call, T0 + SEC), 0);
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), T0 + 6 * SEC);
  fx_run_until(f, T0 + 6 * SEC - 1);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 0);
  fx_run_until(f, T0 + 6 * SEC);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 1); /* not at the 10 s interval */
  fx_done(f);
}

TEST(no_request_in_flight_keeps_the_keepalive_interval) {
  fx *f = legacy(0);
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), T0 + 10 * SEC);
  ASSERT_UINT_EQ(first_sent_at(f, MCPP_FRAME_PING, T0, T0 + 11 * SEC), T0 + 10 * SEC);
  fx_done(f);
}

TEST(an_answered_call_takes_the_early_probe_back) {
  fx *f = legacy(0);
  ASSERT_EQ(fx_out(f, call, T0), 0);
  fx_run_until(f, T0 + 4 * SEC);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}", T0 + 4 * SEC),
            MCPP_RECV_FORWARD);
  /* Nothing in flight: the interval again, from the answer. */
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), T0 + 14 * SEC);
  fx_done(f);
}

TEST(traffic_during_the_call_keeps_the_early_probe_away) {
  fx *f = legacy(0);
  ASSERT_EQ(fx_out(f, call, T0), 0);
  /* Progress notifications every 4 s: the server is talking. */
  for (uint64_t t = T0 + 4 * SEC; t <= T0 + 20 * SEC; t += 4 * SEC) {
    fx_run_until(f, t);
    ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
                         "\"params\":{\"progressToken\":1,\"progress\":1}}", t),
              MCPP_RECV_FORWARD);
  }
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 0);
  fx_done(f);
}

/* On 2026-07-28 there is no ping: the era's probe goes early instead. */
TEST(request_in_flight_on_2026_sends_server_discover_early_and_never_a_ping) {
  fx *f = wrap_defaults(0);
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":"
            "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}",
         T0);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"supportedVersions\":"
                       "[\"2026-07-28\"],\"capabilities\":{}}}", T0),
            MCPP_RECV_FORWARD);
  ASSERT_EQ(fx_out(f, call, T0), 0);
  ASSERT_UINT_EQ(first_sent_at(f, MCPP_FRAME_PROBE, T0, T0 + 6 * SEC), T0 + 5 * SEC);
  ASSERT(strstr(fx_last_sent(f, MCPP_FRAME_PROBE)->text, "server/discover") != NULL);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 0);
  fx_done(f);
}

/* The process is looked at halfway to the early probe; stopped there and
 * still a tenth of the timeout later, with the call waiting, it is stale:
 * the call fails 3 s after the server's last byte, where keepalive alone
 * took the interval + timeout x 1.5. */
TEST(stopped_server_with_a_call_waiting_is_stale_after_two_looks_by_3s) {
  fx *f = legacy(1);
  ASSERT_EQ(fx_out(f, call, T0), 0);
  f->process = MCPP_PROCESS_STOPPED;
  fx_run_until(f, T0 + 4 * SEC);
  const fx_event *stale = fx_first_event(f, MCPP_EV_STALE);
  ASSERT(stale != NULL);
  ASSERT_UINT_EQ(stale->at, T0 + 3000 * MS);
  ASSERT_STR_EQ(stale->proof, "process");
  const fx_event *suspect = fx_first_event(f, MCPP_EV_SUSPECT);
  ASSERT(suspect != NULL);
  ASSERT_UINT_EQ(suspect->at, T0 + 2500 * MS);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 0);
  fx_done(f);
}

/* A traced process is stopped for an instant at each syscall: one look
 * that catches it is not a verdict, even with a call waiting. */
TEST(a_process_seen_stopped_once_with_a_call_waiting_is_not_convicted) {
  fx *f = legacy(1);
  f->cpu_step = 200 * MS;
  ASSERT_EQ(fx_out_timed(f, call, 60000, T0), 0);
  f->process = MCPP_PROCESS_STOPPED;
  fx_run_until(f, T0 + 2500 * MS); /* the halfway look sees it stopped */
  ASSERT_EQ(fx_count_events(f, MCPP_EV_SUSPECT), 1);
  f->process = MCPP_PROCESS_RUNNING;
  fx_run_until(f, T0 + 20 * SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 0);
  fx_done(f);
}

/* Idle, a stop must last a timeout before it is held against the server
 * (job control, a debugger): no early verdict without a call waiting. */
TEST(stopped_server_with_nothing_in_flight_waits_for_the_keepalive) {
  fx *f = legacy(1);
  f->process = MCPP_PROCESS_STOPPED;
  fx_run_until(f, T0 + 10 * SEC - 1);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_SUSPECT), 0);
  fx_done(f);
}

/* The detector still has the last word: a server burning CPU on the call
 * is busy, not stale, until the call's own deadline. */
TEST(busy_server_during_a_call_is_probed_early_but_not_convicted) {
  fx *f = legacy(1);
  f->cpu_step = 200 * MS;
  ASSERT_EQ(fx_out_timed(f, call, 60000, T0), 0);
  fx_run_until(f, T0 + 40 * SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_BUSY), 1);
  ASSERT(fx_count_sent(f, MCPP_FRAME_PING) >= 1);
  fx_done(f);
}

/* A ping-deaf server answering the corroborating probe is not convicted
 * either: the early probe only starts the machinery sooner. */
TEST(ping_deaf_server_during_a_call_is_watched_by_probe_not_convicted) {
  fx *f = legacy(0);
  ASSERT_EQ(fx_out(f, call, T0), 0);
  int answered = 0;
  for (uint64_t t = T0 + 10 * MS; t <= T0 + 60 * SEC; t += 10 * MS) {
    fx_run_until(f, t);
    if (fx_count_sent(f, MCPP_FRAME_PROBE) > answered) {
      char id[128], frame[512];
      fx_ping_id(fx_last_sent(f, MCPP_FRAME_PROBE), id, sizeof id);
      snprintf(frame, sizeof frame,
               "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"tools\":[]}}", id);
      ASSERT_EQ(fx_recv(f, frame, t), MCPP_RECV_CONSUMED);
      answered++;
    }
  }
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_PING_DEAF), 1);
  fx_done(f);
}

/* ------------------------------------------- deadlines are never born late
 *
 * The pause guard (mcpp_engine_on_timer) takes a deadline found long past
 * for a host that slept, and forgives the server's silence: it cancels the
 * keepalive ping or the detector's corroborating probe and sends it again.
 * So nothing the engine schedules may be due before the call that made it
 * due: the early probe and look run from when calls began to be in flight,
 * not from the sending of whichever call is oldest now (an older one's
 * timeout or cancel would expose a newer one's, long past). The driver
 * below is conn.c's: the timer runs at the deadline, or at once if that
 * already passed, and every deadline is checked against the clock of the
 * engine call that produced it. */
static void drive(fx *f, uint64_t until) {
  for (int guard = 0; guard < 100000; guard++) {
    uint64_t d = mcpp_engine_next_deadline(f->e);
    MCPP_ASSERT_CMP(uint64_t, PRIu64, d, >=, f->clock); /* not born past */
    if (d > until) {
      f->clock = until;
      return;
    }
    f->clock = d;
    ASSERT_EQ(mcpp_engine_on_timer(f->e, d), 0);
  }
  MCPP_FAIL("timer loop did not settle");
}

/* The soak's settings (tests/soak/soak.h): keepalive 1 s, ping timeout
 * 2 s, 3 failures, requests time out after 5 s. */
static fx *soak_session(void) {
  fx *f = fx_new();
  f->s.interval_ms = 1000;
  f->s.timeout_ms = 2000;
  f->s.failures = 3;
  f->s.request_timeout_ms = 5000;
  f->s.jitter_pct = 0;
  f->observe_process = 1;
  f->feed_cpu = 1;
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
            "{\"protocolVersion\":\"2025-11-25\"}}", T0);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":"
                       "\"2025-11-25\",\"serverInfo\":{\"name\":\"legacy\"}}}", T0),
            MCPP_RECV_FORWARD);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", T0);
  return f;
}

/* The soak's undetected fault, replayed: a server spinning in a busy loop
 * from T0 (CPU time grows, nothing is read or written) while the
 * application sends it a call every 300 ms, each timing out after 5 s.
 * The calls in flight when the wait began excuse it until their deadlines
 * (detector.c); then the next keepalive timeout convicts, as without a
 * call in flight. With the early look computed from the oldest call's
 * sending, every timeout made the next look due seconds in the past, each
 * round's ping or probe was cancelled as "paused", and it was never
 * convicted. */
TEST(spinning_server_fed_a_call_every_300ms_is_convicted_and_nothing_is_taken_for_a_pause) {
  fx *f = soak_session();
  f->cpu_step = 200 * MS;
  char req[160];
  int id = 1;
  for (uint64_t t = T0; t <= T0 + 40 * SEC; t += 300 * MS) {
    drive(f, t);
    if (fx_count_events(f, MCPP_EV_STALE)) break;
    snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
             "\"tools/call\",\"params\":{\"name\":\"x\"}}", id++);
    ASSERT_EQ(fx_out(f, req, t), 0);
  }
  ASSERT_EQ(fx_count_events(f, MCPP_EV_PAUSED), 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_BUSY), 1);
  const fx_event *stale = fx_first_event(f, MCPP_EV_STALE);
  ASSERT(stale != NULL);
  /* Pings at 1, 3, 5, 7 s fail, the probe at 9 s too: busy, excused by
   * the calls sent before 9 s until the last of them expires (14 s); the
   * ping timing out at 15 s convicts. */
  ASSERT_UINT_EQ(stale->at, T0 + 15 * SEC);
  ASSERT_STR_EQ(stale->proof, "ping; probe:tools/list timed out; cpu busy, "
                              "no request excuses it");
  fx_done(f);
}

/* The same at wrap's defaults, with the oldest call cancelled by the
 * application long after a newer one was sent. */
TEST(cancelling_the_oldest_call_makes_nothing_due_in_the_past) {
  fx *f = legacy(1);
  ASSERT_EQ(fx_out_timed(f, call, 60000, T0), 0);
  drive(f, T0 + SEC);
  ASSERT_EQ(fx_out_timed(f, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\","
                            "\"params\":{\"name\":\"y\"}}", 60000, T0 + SEC), 0);
  drive(f, T0 + 9 * SEC);
  ASSERT_EQ(fx_out(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                      "\"params\":{\"requestId\":7}}", T0 + 9 * SEC), 0);
  drive(f, T0 + 30 * SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_PAUSED), 0);
  fx_done(f);
}

/* A call sent to a process already seen stopped while idle: the verdict
 * comes a tenth of the timeout after the call, not a tenth after the
 * first sighting (long past, taken for a pause of ours). */
TEST(a_call_sent_to_a_process_already_seen_stopped_is_stale_a_tenth_of_the_timeout_later) {
  fx *f = legacy(1);
  f->process = MCPP_PROCESS_STOPPED;
  drive(f, T0 + 13 * SEC); /* seen stopped by the first keepalive, at 10 s */
  const fx_event *suspect = fx_first_event(f, MCPP_EV_SUSPECT);
  ASSERT(suspect != NULL);
  ASSERT_UINT_EQ(suspect->at, T0 + 10 * SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 0); /* idle: not before 15 s */
  ASSERT_EQ(fx_out(f, call, T0 + 13 * SEC), 0);
  drive(f, T0 + 20 * SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_PAUSED), 0);
  const fx_event *stale = fx_first_event(f, MCPP_EV_STALE);
  ASSERT(stale != NULL);
  ASSERT_UINT_EQ(stale->at, T0 + 13500 * MS);
  ASSERT_STR_EQ(stale->proof, "process");
  fx_done(f);
}

/* mcpp_engine_awaits: what a Streamable HTTP client asks before it keeps a
 * POST open. The engine's ping (manual or keepalive) and an application
 * request wait until answered, timed out or cancelled; nothing else does. */
TEST(awaits_says_which_requests_still_wait_for_their_answer) {
  fx *f = legacy(0);
  uint64_t seq = 0;
  ASSERT_EQ(mcpp_engine_ping(f->e, 1000, T0, &seq), 0);
  char ping[FX_TEXT];
  strcpy(ping, fx_last_sent(f, MCPP_FRAME_PING)->text);
  ASSERT_EQ(mcpp_engine_awaits(f->e, ping, strlen(ping)), 1);
  ASSERT_EQ(fx_answer_last_ping(f, "\"result\":{}", T0 + MS), MCPP_RECV_CONSUMED);
  ASSERT_EQ(mcpp_engine_awaits(f->e, ping, strlen(ping)), 0);
  /* A manual ping that times out. */
  ASSERT_EQ(mcpp_engine_ping(f->e, 1000, T0 + 2 * MS, &seq), 0);
  strcpy(ping, fx_last_sent(f, MCPP_FRAME_PING)->text);
  ASSERT_EQ(mcpp_engine_awaits(f->e, ping, strlen(ping)), 1);
  fx_run_until(f, T0 + 2 * MS + SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_TIMEOUT), 1);
  ASSERT_EQ(mcpp_engine_awaits(f->e, ping, strlen(ping)), 0);
  /* The keepalive ping (10 s after the pong), until its 5 s timeout. */
  fx_run_until(f, T0 + MS + 10 * SEC);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 3);
  strcpy(ping, fx_last_sent(f, MCPP_FRAME_PING)->text);
  ASSERT_EQ(mcpp_engine_awaits(f->e, ping, strlen(ping)), 1);
  fx_run_until(f, T0 + MS + 15 * SEC);
  ASSERT_EQ(mcpp_engine_awaits(f->e, ping, strlen(ping)), 0);
  /* An application request: until answered; its answer is no request. */
  ASSERT_EQ(fx_out(f, call, T0 + 16 * SEC), 0);
  ASSERT_EQ(mcpp_engine_awaits(f->e, call, strlen(call)), 1);
  static const char answer[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}";
  ASSERT_EQ(mcpp_engine_awaits(f->e, answer, strlen(answer)), 0);
  ASSERT_EQ(fx_recv(f, answer, T0 + 16 * SEC + MS), MCPP_RECV_FORWARD);
  ASSERT_EQ(mcpp_engine_awaits(f->e, call, strlen(call)), 0);
  /* One that times out in the engine. */
  ASSERT_EQ(fx_out_timed(f, call, 100, T0 + 17 * SEC), 0);
  ASSERT_EQ(mcpp_engine_awaits(f->e, call, strlen(call)), 1);
  fx_run_until(f, T0 + 17 * SEC + 100 * MS);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_REQUEST_TIMEOUT), 1);
  ASSERT_EQ(mcpp_engine_awaits(f->e, call, strlen(call)), 0);
  /* No request: a notification, garbage, a foreign id never sent, NULL. */
  static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}";
  ASSERT_EQ(mcpp_engine_awaits(f->e, note, strlen(note)), 0);
  ASSERT_EQ(mcpp_engine_awaits(f->e, "not json", 8), 0);
  static const char other[] = "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\"}";
  ASSERT_EQ(mcpp_engine_awaits(f->e, other, strlen(other)), 0);
  ASSERT_EQ(mcpp_engine_awaits(NULL, other, strlen(other)), 0);
  ASSERT_EQ(mcpp_engine_awaits(f->e, NULL, 0), 0);
  fx_done(f);
}
