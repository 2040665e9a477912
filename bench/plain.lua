-- wrk script for the HTTP ceiling (nginx `return 204`): plain GETs, same report as check.lua.
dofile((os.getenv("BENCH_DIR") or "bench") .. "/report.lua")
