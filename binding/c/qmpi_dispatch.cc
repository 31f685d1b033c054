// PMPI_NAME and MPI_NAME for every function QMPI covers: the first tool
// that registered NAME, else straight to the C binding's definition
// (binding/c/qmpi.h). Also the library's own QMPI functions (tool 0).
#include "binding/c/qmpi.h"

namespace sonde::qmpi {
namespace {

// Tool 0: the C binding's definition behind the QMPI signature.
template <auto Impl>
struct Library;
template <class R, class... A, R (*Impl)(A...)>
struct Library<Impl> {
  static R call(QMPI_Context, int, A... a) { return Impl(a...); }
};

// A call some tool intercepts, out of the dispatcher's line: tail-called,
// so its return address is the application's call site.
template <class F, int E>
struct Intercepted;
template <class R, class... A, int E>
struct Intercepted<R(QMPI_Context, int, A...), E> {
  [[gnu::noinline, gnu::cold]] static R call(A... a) {
    auto* f = reinterpret_cast<R (*)(QMPI_Context, int, A...)>(g_first_function[E]);
    return f(context(__builtin_return_address(0)), g_first_tool[E], a...);
  }
};

}  // namespace
}  // namespace sonde::qmpi

// The C binding's definitions, under their internal names.
#define SONDE_QMPI_FUNCTION(RET, NAME, PNAME, IMPL, TYPE, ENUM, PARAMS, ARGS) extern "C" RET IMPL PARAMS;
#include "binding/c/qmpi_functions.inc"
#undef SONDE_QMPI_FUNCTION

namespace sonde::qmpi {
#define SONDE_QMPI_FUNCTION(RET, NAME, PNAME, IMPL, TYPE, ENUM, PARAMS, ARGS) \
  reinterpret_cast<Function>(static_cast<TYPE*>(&Library<&IMPL>::call)),
const Function kLibrary[MPI_LAST_FUNC_T] = {
#include "binding/c/qmpi_functions.inc"
};
#undef SONDE_QMPI_FUNCTION
}  // namespace sonde::qmpi

// MPI_Init and MPI_Init_thread start the tools first: their init functions
// register what the call itself then dispatches. The dispatcher is a load,
// a branch and a tail call (no frame of its own).
#define SONDE_QMPI_FUNCTION(RET, NAME, PNAME, IMPL, TYPE, ENUM, PARAMS, ARGS)                         \
  extern "C" [[gnu::optimize("omit-frame-pointer")]] RET PNAME PARAMS {                               \
    if constexpr (ENUM == MPI_INIT_T || ENUM == MPI_INIT_THREAD_T) ::sonde::qmpi::initialize_tools(); \
    if (::sonde::qmpi::g_first_function[ENUM]) [[unlikely]]                                           \
      return ::sonde::qmpi::Intercepted<TYPE, ENUM>::call ARGS;                                       \
    return IMPL ARGS;                                                                                 \
  }                                                                                                   \
  extern "C" RET NAME PARAMS __attribute__((alias(#PNAME)));
#include "binding/c/qmpi_functions.inc"
#undef SONDE_QMPI_FUNCTION
