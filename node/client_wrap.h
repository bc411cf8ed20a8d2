// The client protocol rules of the C core for JavaScript (client_wrap.cc):
// the handshake machine (ClientHandshake) and the 2026-07-28 request
// envelope. JS carries bytes and keeps the clock.
#ifndef MCPPING_NODE_CLIENT_WRAP_H
#define MCPPING_NODE_CLIENT_WRAP_H

#include <napi.h>

namespace mcpping_node {

// Adds ClientHandshake, envelope and the protocol versions.
void InitClient(Napi::Env env, Napi::Object exports);

}  // namespace mcpping_node

#endif
