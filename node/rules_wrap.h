// The C core's shared rules for JavaScript (rules_wrap.cc): ping outcomes,
// HTTP answer classification and the RttStats class. The JS layer only
// translates their answers.
#ifndef MCPPING_NODE_RULES_WRAP_H
#define MCPPING_NODE_RULES_WRAP_H

#include <napi.h>

#include "mcpping.h"

namespace mcpping_node {

// Reads an event object (type, rpcCode, error, or
// errorCode alone, invalid, rttUs) as an mcpp_event;
// throws a TypeError if it is not one.
mcpp_event EventFromJs(Napi::Env env, Napi::Value value);

// The statistics of an RttStats object, else nullptr.
mcpp_rtt_stats *RttStatsFromJs(Napi::Env env, Napi::Value value);

// Adds eventOutcome, outcomeIsLost, httpClassify and RttStats to exports.
void InitRules(Napi::Env env, Napi::Object exports);

}  // namespace mcpping_node

#endif
