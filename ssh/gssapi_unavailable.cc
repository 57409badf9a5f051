// The static build's answer to GSSAPI: libssh.a calls into libgssapi_krb5, which Debian
// ships only as a shared library, so the self-contained binary (scripts/package.sh)
// links these instead. Each says GSS_S_UNAVAILABLE (releases succeed): libssh then
// treats Kerberos logins as not possible, and key, agent and password logins work as
// before. Only the first argument (OM_uint32* minor_status) is ever read, which is
// safe under the C calling conventions of x86-64 and aarch64. No state.
#include <cstdint>

namespace {
using OM_uint32 = std::uint32_t;
constexpr OM_uint32 kUnavailable = 16u << 16;  // GSS_S_UNAVAILABLE (a routine error)

OM_uint32 Unavailable(OM_uint32* minor_status) {
  if (minor_status != nullptr) *minor_status = 0;
  return kUnavailable;
}
OM_uint32 Released(OM_uint32* minor_status) {
  if (minor_status != nullptr) *minor_status = 0;
  return 0;
}
}  // namespace

extern "C" {
void* GSS_C_NT_HOSTBASED_SERVICE = nullptr;
void* GSS_C_NT_USER_NAME = nullptr;

#define NASPERF_GSS_UNAVAILABLE(name) \
  OM_uint32 name(OM_uint32* minor_status) { return Unavailable(minor_status); }
#define NASPERF_GSS_RELEASED(name) \
  OM_uint32 name(OM_uint32* minor_status) { return Released(minor_status); }

NASPERF_GSS_UNAVAILABLE(gss_accept_sec_context)
NASPERF_GSS_UNAVAILABLE(gss_acquire_cred)
NASPERF_GSS_UNAVAILABLE(gss_add_oid_set_member)
NASPERF_GSS_UNAVAILABLE(gss_create_empty_oid_set)
NASPERF_GSS_UNAVAILABLE(gss_display_name)
NASPERF_GSS_UNAVAILABLE(gss_display_status)
NASPERF_GSS_UNAVAILABLE(gss_get_mic)
NASPERF_GSS_UNAVAILABLE(gss_import_name)
NASPERF_GSS_UNAVAILABLE(gss_indicate_mechs)
NASPERF_GSS_UNAVAILABLE(gss_init_sec_context)
NASPERF_GSS_UNAVAILABLE(gss_inquire_cred)
NASPERF_GSS_UNAVAILABLE(gss_inquire_cred_by_mech)
NASPERF_GSS_UNAVAILABLE(gss_test_oid_set_member)
NASPERF_GSS_UNAVAILABLE(gss_verify_mic)
NASPERF_GSS_RELEASED(gss_release_buffer)
NASPERF_GSS_RELEASED(gss_release_cred)
NASPERF_GSS_RELEASED(gss_release_name)
NASPERF_GSS_RELEASED(gss_release_oid_set)
}
