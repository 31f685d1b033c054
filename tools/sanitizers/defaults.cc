// Read by ThreadSanitizer at start-up when the binary is built with
// --config=tsan; an ordinary build never calls it.
extern "C" const char* __tsan_default_suppressions() {
  return "called_from_lib:libpmix.so.2\n"
         "race:libpmix.so.2\n"
         "race:libevent_core\n"
         "race:libevent_pthreads\n"
         "mutex:libevent_core\n"
         "mutex:libevent_pthreads\n"
         "mutex:libpmix.so.2\n"
         "deadlock:libpmix.so.2\n"
         "deadlock:libevent_core\n";
}

// libpmix and libevent keep process-lifetime allocations they never free;
// LeakSanitizer (part of --config=asan) would report them in every binary
// that links libpmix.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libpmix.so\n"
         "leak:libevent_core\n"
         "leak:libevent_pthreads\n"
         "leak:libhwloc\n";
}
