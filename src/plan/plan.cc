// Plan is a plain value; its behaviour lives in plan_json.cc and verifier.cc.
#include "plan/plan.h"
