// C ABI: MPI 4.0 sessions, process sets, communicators from groups
// (comm/session.h).
#include <strings.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "binding/c/abi.h"
#include "runtime/lifecycle.h"
#include "comm/comm_build.h"
#include "core/engine.h"
#include "comm/group.h"
#include "base/handles.h"
#include "comm/info.h"
#include "comm/session.h"

using namespace sonde::engine;

namespace {

struct Session {
  int errhandler = MPI_ERRORS_ARE_FATAL;
  int thread_level = MPI_THREAD_SINGLE;
};

HandleTable<Session, SONDE_KIND_SESSION>& sessions() {
  static HandleTable<Session, SONDE_KIND_SESSION> t{0};
  return t;
}

const char* const kLevels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                               "MPI_THREAD_MULTIPLE"};

// An error of a session call: the session's handler decides (MPI 4.0 9.3.4);
// before there is one, or for a handler other than MPI_ERRORS_RETURN, the
// usual path (MPI_COMM_WORLD's handler, fatal by default).
int session_error(const Session* s, int code, const char* fn) {
  if (s && s->errhandler == MPI_ERRORS_RETURN) return code;
  return raise(nullptr, code, fn);
}

int handler_error(int errhandler, int code, const char* fn) {
  if (errhandler == MPI_ERRORS_RETURN) return code;
  return raise(nullptr, code, fn);
}

bool valid_errhandler(MPI_Errhandler h) {
  Errhandler* e = engine().tables().errhandlers.lookup(h);
  return e && !(e->fn && e->user_refs <= 0);
}

bool info_pairs(MPI_Info h, InfoPairs* out) {
  if (h == MPI_INFO_NULL) return true;
  InfoPairs* p = find_info(h);
  if (!p) return false;
  *out = *p;
  return true;
}

// A stringtag or pset name: non-null, shorter than its MPI limit.
bool name_arg(const char* s, size_t limit) { return s && std::strlen(s) < limit; }

}  // namespace

extern "C" {

int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session* session) {
  static constexpr const char* fn = "MPI_Session_init";
  // Legal before MPI_Init: no entry guard; the engine lock exists once the
  // engine runs.
  if (!session) return raise(nullptr, MPI_ERR_ARG, fn);
  if (!valid_errhandler(errhandler)) return raise(nullptr, MPI_ERR_ARG, fn);
  InfoPairs hints;
  if (!info_pairs(info, &hints)) return handler_error(errhandler, MPI_ERR_INFO, fn);
  int required = MPI_THREAD_SINGLE;
  for (const auto& [k, v] : hints)
    if (k == "thread_level")
      for (int l = 0; l < 4; ++l)
        if (strcasecmp(v.c_str(), kLevels[l]) == 0) required = l;
  int provided = MPI_THREAD_SINGLE;
  int rc = session_engine_acquire(required, &provided);
  if (rc) return handler_error(errhandler, rc, fn);
  ApiGuard guard(fn);
  Session* s = nullptr;
  int h = sessions().allocate(&s);
  if (!h) {
    session_engine_release();
    return handler_error(errhandler, MPI_ERR_INTERN, fn);
  }
  s->errhandler = errhandler;
  s->thread_level = provided;
  *session = h;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Session_init)

int PMPI_Session_finalize(MPI_Session* session) {
  SONDE_ENTER("MPI_Session_finalize");
  if (!session) return raise(nullptr, MPI_ERR_ARG, fn);
  Session* s = sessions().lookup(*session);
  if (!s) return raise(nullptr, MPI_ERR_SESSION, fn);
  sessions().release(*session);
  *session = MPI_SESSION_NULL;
  int rc = session_engine_release();
  return rc ? raise(nullptr, rc, fn) : MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Session_finalize)

int PMPI_Session_get_info(MPI_Session session, MPI_Info* info_used) {
  SONDE_ENTER("MPI_Session_get_info");
  Session* s = sessions().lookup(session);
  if (!s) return raise(nullptr, MPI_ERR_SESSION, fn);
  if (!info_used) return session_error(s, MPI_ERR_ARG, fn);
  int rc = new_info({{"thread_level", kLevels[s->thread_level]}}, info_used);
  return rc ? session_error(s, rc, fn) : MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Session_get_info)

int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int* npset_names) {
  SONDE_ENTER("MPI_Session_get_num_psets");
  Session* s = sessions().lookup(session);
  if (!s) return raise(nullptr, MPI_ERR_SESSION, fn);
  InfoPairs hints;
  if (!info_pairs(info, &hints)) return session_error(s, MPI_ERR_INFO, fn);
  if (!npset_names) return session_error(s, MPI_ERR_ARG, fn);
  *npset_names = int(pset_names().size());
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Session_get_num_psets)

int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int* pset_len, char* pset_name) {
  SONDE_ENTER("MPI_Session_get_nth_pset");
  Session* s = sessions().lookup(session);
  if (!s) return raise(nullptr, MPI_ERR_SESSION, fn);
  InfoPairs hints;
  if (!info_pairs(info, &hints)) return session_error(s, MPI_ERR_INFO, fn);
  if (!pset_len || *pset_len < 0 || (*pset_len > 0 && !pset_name)) return session_error(s, MPI_ERR_ARG, fn);
  if (n < 0 || n >= int(pset_names().size())) return session_error(s, MPI_ERR_ARG, fn);
  // MPI 4.0 11.3.2: *pset_len 0 asks for the length (with the terminating
  // null); otherwise up to *pset_len - 1 characters and a null are written.
  const std::string& name = pset_names()[size_t(n)];
  if (*pset_len > 0) {
    size_t k = std::min(name.size(), size_t(*pset_len) - 1);
    std::memcpy(pset_name, name.data(), k);
    pset_name[k] = '\0';
  }
  *pset_len = int(name.size()) + 1;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Session_get_nth_pset)

int PMPI_Session_get_pset_info(MPI_Session session, const char* pset_name, MPI_Info* info) {
  SONDE_ENTER("MPI_Session_get_pset_info");
  Session* s = sessions().lookup(session);
  if (!s) return raise(nullptr, MPI_ERR_SESSION, fn);
  if (!info || !name_arg(pset_name, MPI_MAX_PSET_NAME_LEN)) return session_error(s, MPI_ERR_ARG, fn);
  std::vector<int> members;
  if (!pset_members(pset_name, &members)) return session_error(s, MPI_ERR_ARG, fn);
  int rc = new_info({{"mpi_size", std::to_string(members.size())}}, info);
  return rc ? session_error(s, rc, fn) : MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Session_get_pset_info)

int PMPI_Group_from_session_pset(MPI_Session session, const char* pset_name, MPI_Group* newgroup) {
  SONDE_ENTER("MPI_Group_from_session_pset");
  Session* s = sessions().lookup(session);
  if (!s) return raise(nullptr, MPI_ERR_SESSION, fn);
  if (!newgroup || !name_arg(pset_name, MPI_MAX_PSET_NAME_LEN)) return session_error(s, MPI_ERR_ARG, fn);
  std::vector<int> members;
  if (!pset_members(pset_name, &members)) return session_error(s, MPI_ERR_ARG, fn);
  int rc = new_group(std::move(members), newgroup);
  return rc ? session_error(s, rc, fn) : MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Group_from_session_pset)

int PMPI_Comm_create_from_group(MPI_Group group, const char* stringtag, MPI_Info info, MPI_Errhandler errhandler,
                                MPI_Comm* newcomm) {
  SONDE_ENTER("MPI_Comm_create_from_group");
  if (!valid_errhandler(errhandler)) return raise(nullptr, MPI_ERR_ARG, fn);
  Group* g = find_group(group);
  if (!g) return handler_error(errhandler, MPI_ERR_GROUP, fn);
  InfoPairs hints;
  if (!info_pairs(info, &hints)) return handler_error(errhandler, MPI_ERR_INFO, fn);
  if (!newcomm || !name_arg(stringtag, MPI_MAX_STRINGTAG_LEN)) return handler_error(errhandler, MPI_ERR_ARG, fn);
  if (g->world.empty()) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  Comm* c = nullptr;
  int rc = comm_from_group(g->world, stringtag, errhandler, hints, &c);
  if (rc) return handler_error(errhandler, rc, fn);
  *newcomm = c->handle;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_create_from_group)

int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group,
                                      int remote_leader, const char* stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler, MPI_Comm* newintercomm) {
  SONDE_ENTER("MPI_Intercomm_create_from_groups");
  if (!valid_errhandler(errhandler)) return raise(nullptr, MPI_ERR_ARG, fn);
  Group* lg = find_group(local_group);
  Group* rg = find_group(remote_group);
  if (!lg || !rg || lg->world.empty() || rg->world.empty()) return handler_error(errhandler, MPI_ERR_GROUP, fn);
  InfoPairs hints;
  if (!info_pairs(info, &hints)) return handler_error(errhandler, MPI_ERR_INFO, fn);
  if (!newintercomm || !name_arg(stringtag, MPI_MAX_STRINGTAG_LEN)) return handler_error(errhandler, MPI_ERR_ARG, fn);
  if (local_leader < 0 || local_leader >= int(lg->world.size()) || remote_leader < 0 ||
      remote_leader >= int(rg->world.size()))
    return handler_error(errhandler, MPI_ERR_RANK, fn);
  for (int w : rg->world)
    if (rank_of(lg->world, w) != MPI_UNDEFINED) return handler_error(errhandler, MPI_ERR_GROUP, fn);  // overlap
  Comm* c = nullptr;
  int rc = intercomm_from_groups(lg->world, rg->world, stringtag, errhandler, hints, &c);
  if (rc) return handler_error(errhandler, rc, fn);
  *newintercomm = c->handle;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Intercomm_create_from_groups)

}  // extern "C"
