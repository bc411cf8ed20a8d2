// The Streamable HTTP client session of the C core for JavaScript
// (http_session_wrap.cc): http_session.js reports what its HTTP requests
// did and runs what the session asks, in order.
#ifndef MCPPING_NODE_HTTP_SESSION_WRAP_H
#define MCPPING_NODE_HTTP_SESSION_WRAP_H

#include <napi.h>

namespace mcpping_node {

// Adds HttpSession.
void InitHttpSession(Napi::Env env, Napi::Object exports);

}  // namespace mcpping_node

#endif
