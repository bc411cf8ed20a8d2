/* The detector convicts only the dead (issue 25): when keepalive pings
 * fail, one side-effect-free probe corroborates them before the verdict; a
 * server that answers it is ping-deaf and watched by probe; one whose CPU
 * advances while a request is in flight is busy until that request's
 * deadline; a stopped or silent, idle one is stale within
 * interval + timeout x failures + one probe timeout. Settings are the
 * issue's: interval 1 s, timeout 1 s, failures 2. */
#include "engine_fixture.h"

/* A legacy session (initialize, 2025-11-25) at T0, at 1 s / 1 s / 2. */
static fx *legacy(int observe_process) {
  fx *f = fx_new();
  f->s.interval_ms = 1000;
  f->s.timeout_ms = 1000;
  f->s.failures = 2;
  f->s.jitter_pct = 0;
  f->observe_process = observe_process;
  f->feed_cpu = observe_process;
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
            "{\"protocolVersion\":\"2025-11-25\"}}", T0);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":"
                       "\"2025-11-25\",\"serverInfo\":{\"name\":\"legacy\"}}}", T0),
            MCPP_RECV_FORWARD);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", T0);
  return f;
}

/* The bound the issue sets: interval + timeout x failures + one probe
 * timeout. */
#define BOUND (T0 + 1 * SEC + 2 * 1 * SEC + 1 * SEC)

static int answer_last(fx *f, int kind, const char *tail, uint64_t now) {
  char id[128], frame[512];
  const fx_frame *req = fx_last_sent(f, kind);
  ASSERT(req != NULL);
  snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":%s,%s}",
           fx_ping_id(req, id, sizeof id), tail);
  return fx_recv(f, frame, now);
}

/* Runs to `until` in 10 ms steps with a server that answers every probe
 * 10 ms after it is sent and never answers a ping. */
static void run_ping_deaf(fx *f, uint64_t until, int *answered) {
  for (uint64_t t = f->clock + 10 * MS; t <= until; t += 10 * MS) {
    fx_run_until(f, t);
    if (fx_count_sent(f, MCPP_FRAME_PROBE) > *answered) {
      ASSERT_EQ(answer_last(f, MCPP_FRAME_PROBE, "\"result\":{\"tools\":[]}", t),
                MCPP_RECV_CONSUMED);
      (*answered)++;
    }
  }
}

TEST(ping_deaf_healthy_server_idle_8s_is_never_convicted_and_is_watched_by_probe) {
  fx *f = legacy(1);
  int answered = 0;
  run_ping_deaf(f, T0 + 8 * SEC, &answered);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 0);
  /* Reported once, with the probe that proved it alive. */
  ASSERT_EQ(fx_count_events(f, MCPP_EV_PING_DEAF), 1);
  const fx_event *deaf = fx_first_event(f, MCPP_EV_PING_DEAF);
  ASSERT_STR_EQ(deaf->proof, "probe:tools/list");
  ASSERT_EQ(fx_count_records(f, "ping_deaf"), 1);
  ASSERT_STR_EQ(mcpp_event_name(MCPP_EV_PING_DEAF), "ping_deaf");
  /* The two pings that failed, then the probe at the verdict (3 s). */
  ASSERT_UINT_EQ(deaf->at, T0 + 3 * SEC); /* answered at once */
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 2);
  /* From then on: probes at the interval, no ping ever again. */
  ASSERT_GE(fx_count_sent(f, MCPP_FRAME_PROBE), 5);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_EQ(info.state, MCPP_STATE_ALIVE);
  ASSERT_STR_EQ(info.probe_method, "tools/list");
  ASSERT_EQ(info.unsupported, 0); /* a manual ping is still the user's call */
  ASSERT(mcpp_engine_healthy(f->e, T0 + 8 * SEC));
  fx_done(f);
}

TEST(ping_deaf_server_that_later_goes_silent_is_stale_through_probes) {
  fx *f = legacy(1);
  int answered = 0;
  run_ping_deaf(f, T0 + 5 * SEC, &answered);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_PING_DEAF), 1);
  uint64_t last = fx_last_event(f, MCPP_EV_PROBE_OK)->at;
  /* Silent from here: the next probe is due an interval after the last
   * answer, and two of them fail. */
  fx_run_until(f, last + 1 * SEC + 2 * SEC);
  const fx_event *stale = fx_first_event(f, MCPP_EV_STALE);
  ASSERT(stale != NULL);
  ASSERT_UINT_EQ(stale->at, last + 3 * SEC);
  ASSERT_STR_EQ(stale->proof, "probe:tools/list; cpu idle");
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 2);
  fx_done(f);
}

TEST(silent_idle_server_is_stale_within_the_bound_and_the_proof_names_each_evidence) {
  fx *f = legacy(1);
  fx_run_until(f, BOUND);
  const fx_event *stale = fx_first_event(f, MCPP_EV_STALE);
  ASSERT(stale != NULL);
  ASSERT_UINT_EQ(stale->at, BOUND); /* pings fail at 3 s, the probe at 4 s */
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 2);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PROBE), 1);
  ASSERT_STR_EQ(stale->proof, "ping; probe:tools/list timed out; cpu idle");
  ASSERT_STR_EQ(stale->message, "the server answered neither pings nor a "
                                "probe, and its process used no CPU");
  ASSERT(strstr(fx_last_record(f), "\"event\":\"stale\"") != NULL);
  ASSERT(strstr(fx_last_record(f),
                "\"proof\":\"ping; probe:tools/list timed out; cpu idle\"") != NULL);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_PING_DEAF), 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_BUSY), 0);
  fx_done(f);
}

TEST(silent_server_without_a_process_to_look_at_is_stale_on_pings_and_probe) {
  fx *f = legacy(0);
  fx_run_until(f, BOUND);
  const fx_event *stale = fx_first_event(f, MCPP_EV_STALE);
  ASSERT(stale != NULL);
  ASSERT_UINT_EQ(stale->at, BOUND);
  ASSERT_STR_EQ(stale->proof, "ping; probe:tools/list timed out");
  fx_done(f);
}

TEST(with_probing_turned_off_pings_alone_decide_as_before) {
  fx *f = fx_new();
  f->s.interval_ms = 1000;
  f->s.timeout_ms = 1000;
  f->s.failures = 2;
  f->s.jitter_pct = 0;
  f->s.probe_method = "";
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}}", T0);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":"
             "\"2025-11-25\",\"serverInfo\":{\"name\":\"legacy\"}}}", T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", T0);
  fx_run_until(f, T0 + 3 * SEC);
  const fx_event *stale = fx_first_event(f, MCPP_EV_STALE);
  ASSERT(stale != NULL);
  ASSERT_UINT_EQ(stale->at, T0 + 3 * SEC);
  ASSERT_STR_EQ(stale->proof, "ping");
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PROBE), 0);
  fx_done(f);
}

TEST(late_pong_during_the_probe_means_slow_not_ping_deaf) {
  fx *f = legacy(1);
  fx_run_until(f, T0 + 3 * SEC);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PROBE), 1); /* corroborating */
  /* A GC-like pause ends: the second ping's answer, then the probe's. */
  ASSERT_EQ(fx_answer_last_ping(f, "\"result\":{}", T0 + 3 * SEC + 100 * MS),
            MCPP_RECV_CONSUMED);
  ASSERT_EQ(answer_last(f, MCPP_FRAME_PROBE, "\"result\":{\"tools\":[]}",
                        T0 + 3 * SEC + 110 * MS), MCPP_RECV_CONSUMED);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_PING_DEAF), 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_RECOVERED), 1);
  /* Pings go on. */
  fx_run_until(f, T0 + 4 * SEC + 200 * MS);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 3);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 0);
  fx_done(f);
}

/* A single-threaded server burning CPU on a 6 s synchronous tools/call:
 * deaf to pings and probes meanwhile, but working. */
TEST(cpu_busy_server_on_a_6s_synchronous_call_is_not_convicted_and_the_call_succeeds) {
  fx *f = legacy(1);
  f->cpu_step = 200 * MS; /* CPU time grows between any two looks */
  ASSERT_EQ(fx_out_timed(f, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
                            "\"params\":{\"name\":\"burn\"}}", 30000, T0), 0);
  fx_run_until(f, T0 + 6 * SEC - 1);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_BUSY), 1); /* once per suspicion */
  const fx_event *busy = fx_first_event(f, MCPP_EV_BUSY);
  ASSERT_STR_EQ(busy->proof, "cpu");
  ASSERT_UINT_EQ(busy->at, T0 + 4 * SEC); /* when the probe, too, failed */
  ASSERT_EQ(fx_count_records(f, "busy"), 1);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}",
                    T0 + 6 * SEC), MCPP_RECV_FORWARD);
  ASSERT_EQ(f->n_delivered, 0); /* no timeout error went to the app */
  ASSERT_EQ(fx_count_events(f, MCPP_EV_RECOVERED), 1);
  /* Back to answering pings: nothing is convicted afterwards. */
  for (uint64_t t = T0 + 6 * SEC; t <= T0 + 12 * SEC; t += 10 * MS) {
    fx_run_until(f, t);
    mcpp_engine_info info;
    mcpp_engine_get_info(f->e, &info);
    if (info.pongs_received + info.ping_timeouts < info.pings_sent)
      fx_answer_last_ping(f, "\"result\":{}", t);
  }
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_PING_DEAF), 0);
  fx_done(f);
}

TEST(cpu_busy_server_is_convicted_after_the_requests_own_deadline) {
  fx *f = legacy(1);
  f->cpu_step = 200 * MS; /* spinning forever */
  ASSERT_EQ(fx_out_timed(f, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
                            "\"params\":{\"name\":\"spin\"}}", 5000, T0), 0);
  fx_run_until(f, T0 + 5 * SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_REQUEST_TIMEOUT), 1);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 0);
  /* With nothing in flight the CPU no longer excuses the silence: stale
   * at the next keepalive timeout. */
  fx_run_until(f, T0 + 6 * SEC);
  const fx_event *stale = fx_first_event(f, MCPP_EV_STALE);
  ASSERT(stale != NULL);
  ASSERT_UINT_EQ(stale->at, T0 + 6 * SEC);
  ASSERT_STR_EQ(stale->proof, "ping; probe:tools/list timed out; "
                              "cpu busy, no request excuses it");
  fx_done(f);
}

TEST(idle_cpu_with_a_request_in_flight_is_stale_within_the_bound) {
  fx *f = legacy(1); /* cpu_step 0: a deadlock, not work */
  ASSERT_EQ(fx_out_timed(f, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
                            "\"params\":{\"name\":\"hang\"}}", 30000, T0), 0);
  fx_run_until(f, BOUND);
  const fx_event *stale = fx_first_event(f, MCPP_EV_STALE);
  ASSERT(stale != NULL);
  ASSERT_UINT_EQ(stale->at, BOUND);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_BUSY), 0);
  fx_done(f);
}

TEST(stopped_server_with_a_request_in_flight_is_still_convicted_fast) {
  fx *f = legacy(1);
  f->cpu_step = 200 * MS;
  ASSERT_EQ(fx_out_timed(f, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
                            "\"params\":{\"name\":\"burn\"}}", 30000, T0), 0);
  fx_run_until(f, T0 + SEC);
  /* SIGSTOP right after the first ping: no CPU from here on. */
  f->process = MCPP_PROCESS_STOPPED;
  f->cpu_step = 0;
  fx_run_until(f, T0 + 3 * SEC);
  const fx_event *stale = fx_first_event(f, MCPP_EV_STALE);
  ASSERT(stale != NULL);
  /* Seen stopped halfway through the ping (1.5 s) and again a tenth of the
   * timeout later: with a call waiting a stop is not waited out for a
   * whole timeout (issue 24). */
  ASSERT_UINT_EQ(stale->at, T0 + 1600 * MS);
  ASSERT_STR_EQ(stale->proof, "process");
  ASSERT_EQ(fx_count_events(f, MCPP_EV_BUSY), 0);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PROBE), 0);
  fx_done(f);
}

/* Local health: silence that was ours is not the server's. A host loop
 * blocked 2 s (or a 30 s clock jump: a laptop's suspend) wakes the engine
 * long after a deadline; the pause guard abandons and re-sends the
 * keepalive request instead of counting a failure. */
static void host_stall(uint64_t stall) {
  fx *f = legacy(1);
  /* Healthy until 1 s: the ping goes out. */
  fx_run_until(f, T0 + SEC);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 1);
  /* The host stalls; the pong waits unread in the pipe meanwhile. */
  uint64_t woke = T0 + SEC + stall;
  f->clock = woke;
  ASSERT_EQ(mcpp_engine_on_timer(f->e, woke), 0);
  ASSERT_EQ(fx_answer_last_ping(f, "\"result\":{}", woke), MCPP_RECV_CONSUMED);
  /* A healthy server from then on. */
  for (uint64_t t = woke; t <= woke + 10 * SEC; t += 10 * MS) {
    fx_run_until(f, t);
    mcpp_engine_info info;
    mcpp_engine_get_info(f->e, &info);
    if (info.pongs_received + info.ping_timeouts < info.pings_sent)
      fx_answer_last_ping(f, "\"result\":{}", t);
  }
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_SUSPECT), 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_TIMEOUT), 0);
  /* And it says so, once: how late, and that the cause was local. */
  ASSERT_EQ(fx_count_events(f, MCPP_EV_PAUSED), 1);
  const fx_event *p = fx_first_event(f, MCPP_EV_PAUSED);
  ASSERT(p != NULL);
  ASSERT_STR_EQ(p->proof, "local");
  ASSERT(p->ev.timeout_ms + 1000 >= stall / MS && p->ev.timeout_ms <= stall / MS);
  ASSERT_EQ(fx_count_records(f, "paused"), 1);
  fx_done(f);
}

TEST(host_loop_blocked_2s_convicts_no_one) { host_stall(2 * SEC); }

TEST(clock_jump_of_30s_convicts_no_one) { host_stall(30 * SEC); }

/* Adaptive timing: answers each keepalive ping `delay` after it went out
 * (`delay2` for every other one) until `until`. */
static void answer_pings_after2(fx *f, uint64_t delay, uint64_t delay2,
                                uint64_t until) {
  for (uint64_t t = f->clock + 10 * MS; t <= until; t += 10 * MS) {
    fx_run_until(f, t);
    mcpp_engine_info info;
    mcpp_engine_get_info(f->e, &info);
    const fx_event *ping = fx_last_event(f, MCPP_EV_PING);
    uint64_t d = info.pings_sent % 2 ? delay : delay2;
    if (ping && info.pongs_received + info.ping_timeouts < info.pings_sent &&
        t >= ping->at + d)
      fx_answer_last_ping(f, "\"result\":{}", t);
  }
}

static void answer_pings_after(fx *f, uint64_t delay, uint64_t until) {
  answer_pings_after2(f, delay, delay, until);
}

TEST(routinely_slow_server_is_not_convicted_by_one_slower_spell) {
  fx *f = legacy(1);
  /* Twenty rounds answered in 600 or 900 ms: the keepalive timeout widens
   * to the mean answer time and four mean deviations (RFC 6298). */
  answer_pings_after2(f, 600 * MS, 900 * MS, T0 + 40 * SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_TIMEOUT), 0);
  const fx_event *ping = fx_last_event(f, MCPP_EV_PING);
  ASSERT_GT(ping->ev.timeout_ms, 1200);
  ASSERT_LE(ping->ev.timeout_ms, 4000); /* at most 4x the setting */
  /* A spell of 1.2 s answers: slow for this server, not dead. */
  answer_pings_after(f, 1200 * MS, T0 + 60 * SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_TIMEOUT), 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_SUSPECT), 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 0);
  fx_done(f);
}

TEST(usually_fast_server_keeps_the_configured_timeout) {
  fx *f = legacy(1);
  answer_pings_after(f, 5 * MS, T0 + 40 * SEC);
  const fx_event *ping = fx_last_event(f, MCPP_EV_PING);
  ASSERT_EQ(ping->ev.timeout_ms, 1000); /* never narrower, not wider */
  /* Then silent: stale within the usual bound after its last answer. */
  uint64_t last = fx_last_event(f, MCPP_EV_PONG)->at;
  fx_run_until(f, last + 4 * SEC);
  const fx_event *stale = fx_first_event(f, MCPP_EV_STALE);
  ASSERT(stale != NULL);
  ASSERT_LE(stale->at, last + 4 * SEC);
  fx_done(f);
}

TEST(spinning_server_fed_new_requests_is_convicted_after_the_first_ones_deadline) {
  fx *f = legacy(1);
  f->cpu_step = 200 * MS; /* a livelock: CPU forever, no answer */
  ASSERT_EQ(fx_out_timed(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                            "\"params\":{\"name\":\"spin\"}}", 5000, T0), 0);
  fx_run_until(f, T0 + 4 * SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_BUSY), 1); /* the wait begins */
  /* The application keeps sending, each with a long deadline: only the
   * request in flight when the wait began excuses the silence. */
  char call[160];
  for (int i = 2; i < 40; i++) {
    uint64_t t = T0 + 4 * SEC + (uint64_t)(i - 1) * 250 * MS;
    fx_run_until(f, t);
    if (fx_count_events(f, MCPP_EV_STALE)) break;
    snprintf(call, sizeof call, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
                                "\"tools/call\",\"params\":{\"name\":\"x\"}}", i);
    ASSERT_EQ(fx_out_timed(f, call, 60000, t), 0);
  }
  const fx_event *stale = fx_first_event(f, MCPP_EV_STALE);
  ASSERT(stale != NULL);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_BUSY), 1);
  /* The first request expired at 5 s; the next keepalive timeout convicts. */
  ASSERT_UINT_EQ(stale->at, T0 + 6 * SEC);
  ASSERT_STR_EQ(stale->proof, "ping; probe:tools/list timed out; cpu busy, "
                              "no request excuses it");
  fx_done(f);
}
