// `mcpping watch`'s core (csrc/src/app/watch.c, mcpping/watch.h) for
// JavaScript. node/watch.js only plumbs; every state, line and byte comes
// from C.
#ifndef MCPPING_NODE_WATCH_WRAP_H
#define MCPPING_NODE_WATCH_WRAP_H

#include <napi.h>

namespace mcpping_node {

// Adds watchNew, watchUsage, watchAdd, watchListening, watchListenFailed,
// watchDue, watchOpened, watchOpenFailed, watchClosed, watchFeed,
// watchRespond, watchStopping, watchStopped, watchOutput and watchEvents
// to exports.
void InitWatch(Napi::Env env, Napi::Object exports);

}  // namespace mcpping_node

#endif
