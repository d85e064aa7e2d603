// Clang thread-safety annotations (no-ops on other compilers).
#pragma once

#if defined(__clang__)
#define BROKER_TSA(x) __attribute__((x))
#else
#define BROKER_TSA(x)
#endif

#define CAPABILITY(x) BROKER_TSA(capability(x))
#define SCOPED_CAPABILITY BROKER_TSA(scoped_lockable)
#define GUARDED_BY(x) BROKER_TSA(guarded_by(x))
#define PT_GUARDED_BY(x) BROKER_TSA(pt_guarded_by(x))
#define ACQUIRED_BEFORE(...) BROKER_TSA(acquired_before(__VA_ARGS__))
#define REQUIRES(...) BROKER_TSA(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) BROKER_TSA(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) BROKER_TSA(acquire_capability(__VA_ARGS__))
#define RELEASE(...) BROKER_TSA(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) BROKER_TSA(try_acquire_capability(__VA_ARGS__))
#define NO_THREAD_SAFETY_ANALYSIS BROKER_TSA(no_thread_safety_analysis)
