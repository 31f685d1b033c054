// C ABI: dynamic processes (MPI 4.1 sections 11.8-11.10): spawning,
// ports and accept/connect, the name service, MPI_Comm_join. The work is
// the runtime's (runtime/dynamic.h); here arguments and handles.
#include <cstring>
#include <string>
#include <vector>

#include "binding/c/abi.h"
#include "comm/info.h"
#include "core/engine.h"
#include "runtime/dynamic.h"

using namespace sonde::engine;

namespace {

// The info keys of MPI 4.1 11.8.4 that Sonde serves: "host", "hostfile",
// "wdir", "path" (others are ignored, as the standard allows).
bool app_from(const char* command, char** argv, int maxprocs, MPI_Info info, sonde::dynamic::App* app) {
  app->command = command;
  for (char** a = argv; a != nullptr && *a != nullptr; ++a) app->args.emplace_back(*a);
  app->procs = maxprocs;
  if (info != MPI_INFO_NULL) {
    InfoPairs* pairs = find_info(info);
    if (!pairs) return false;
    for (const auto& [key, value] : *pairs) {
      if (key == "wdir") app->wdir = value;
      if (key == "path") app->path = value;
      if (key == "host") app->host = value;
      if (key == "hostfile") app->hostfile = value;
    }
  }
  return true;
}

int finish_spawn(Comm* c, int rc, std::vector<int>& codes, int* array_of_errcodes, Comm* inter, MPI_Comm* intercomm,
                 const char* fn) {
  if (array_of_errcodes != MPI_ERRCODES_IGNORE)
    for (size_t i = 0; i < codes.size(); ++i) array_of_errcodes[i] = codes[i];
  if (rc) {
    *intercomm = MPI_COMM_NULL;
    return raise(c, rc, fn);
  }
  *intercomm = inter->handle;
  return MPI_SUCCESS;
}

bool valid_port(const char* port) { return port && strnlen(port, MPI_MAX_PORT_NAME) < MPI_MAX_PORT_NAME; }

int copy_port(const std::string& s, char* out) {
  if (s.size() >= size_t(MPI_MAX_PORT_NAME)) return MPI_ERR_INTERN;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Comm_spawn(const char* command, char* argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                    MPI_Comm* intercomm, int array_of_errcodes[]) {
  SONDE_ENTER("MPI_Comm_spawn");
  Comm* c = find_comm(comm);
  if (!c || c->inter) return raise(c, MPI_ERR_COMM, fn);
  if (root < 0 || root >= c->size) return raise(c, MPI_ERR_ROOT, fn);
  if (!intercomm) return raise(c, MPI_ERR_ARG, fn);
  // The root's arguments are the ones that count (the others may pass
  // anything); a bad one there still goes through the collective so that
  // nobody waits.
  std::vector<sonde::dynamic::App> apps(1);
  if (c->rank == root && (!command || maxprocs < 1 || !app_from(command, argv, maxprocs, info, &apps[0]))) {
    apps.clear();
  }
  std::vector<int> codes;
  Comm* inter = nullptr;
  int rc = spawn(c, root, apps, &codes, &inter);
  return finish_spawn(find_comm(comm), rc, codes, array_of_errcodes, inter, intercomm, fn);
}
SONDE_WEAK_ALIAS(Comm_spawn)

int PMPI_Comm_spawn_multiple(int count, char* array_of_commands[], char** array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[], int root, MPI_Comm comm,
                             MPI_Comm* intercomm, int array_of_errcodes[]) {
  SONDE_ENTER("MPI_Comm_spawn_multiple");
  Comm* c = find_comm(comm);
  if (!c || c->inter) return raise(c, MPI_ERR_COMM, fn);
  if (root < 0 || root >= c->size) return raise(c, MPI_ERR_ROOT, fn);
  if (!intercomm) return raise(c, MPI_ERR_ARG, fn);
  std::vector<sonde::dynamic::App> apps;
  if (c->rank == root) {
    bool ok = count > 0 && array_of_commands && array_of_maxprocs;
    for (int i = 0; ok && i < count; ++i) {
      sonde::dynamic::App app;
      ok = array_of_commands[i] && array_of_maxprocs[i] >= 1 &&
           app_from(array_of_commands[i], array_of_argv ? array_of_argv[i] : nullptr, array_of_maxprocs[i],
                    array_of_info ? array_of_info[i] : MPI_INFO_NULL, &app);
      apps.push_back(std::move(app));
    }
    if (!ok) apps.clear();
  }
  std::vector<int> codes;
  Comm* inter = nullptr;
  int rc = spawn(c, root, apps, &codes, &inter);
  return finish_spawn(find_comm(comm), rc, codes, array_of_errcodes, inter, intercomm, fn);
}
SONDE_WEAK_ALIAS(Comm_spawn_multiple)

int PMPI_Comm_get_parent(MPI_Comm* parent) {
  SONDE_ENTER("MPI_Comm_get_parent");
  if (!parent) return raise(nullptr, MPI_ERR_ARG, fn);
  Comm* p = parent_comm();
  *parent = p ? p->handle : MPI_COMM_NULL;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_get_parent)

int PMPI_Open_port(MPI_Info, char* port_name) {
  SONDE_ENTER("MPI_Open_port");
  if (!port_name) return raise(nullptr, MPI_ERR_ARG, fn);
  std::string port;
  int rc = open_port(&port);
  if (!rc) rc = copy_port(port, port_name);
  return rc ? raise(nullptr, rc, fn) : MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Open_port)

int PMPI_Close_port(const char* port_name) {
  SONDE_ENTER("MPI_Close_port");
  if (!valid_port(port_name)) return raise(nullptr, MPI_ERR_PORT, fn);
  int rc = close_port(port_name);
  return rc ? raise(nullptr, rc, fn) : MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Close_port)

static int accept_connect(bool acceptor, const char* port_name, int root, MPI_Comm comm, MPI_Comm* newcomm,
                          const char* fn) {
  Comm* c = find_comm(comm);
  if (!c || c->inter) return raise(c, MPI_ERR_COMM, fn);
  if (root < 0 || root >= c->size) return raise(c, MPI_ERR_ROOT, fn);
  if (!newcomm) return raise(c, MPI_ERR_ARG, fn);
  // Only the root's port matters; others may pass anything.
  std::string port = c->rank == root && valid_port(port_name) ? port_name : "";
  Comm* out = nullptr;
  int rc = acceptor ? accept(port, root, c, &out) : connect(port, root, c, &out);
  if (rc) {
    *newcomm = MPI_COMM_NULL;
    return raise(find_comm(comm), rc, fn);
  }
  *newcomm = out->handle;
  return MPI_SUCCESS;
}

int PMPI_Comm_accept(const char* port_name, MPI_Info, int root, MPI_Comm comm, MPI_Comm* newcomm) {
  SONDE_ENTER("MPI_Comm_accept");
  return accept_connect(true, port_name, root, comm, newcomm, fn);
}
SONDE_WEAK_ALIAS(Comm_accept)

int PMPI_Comm_connect(const char* port_name, MPI_Info, int root, MPI_Comm comm, MPI_Comm* newcomm) {
  SONDE_ENTER("MPI_Comm_connect");
  return accept_connect(false, port_name, root, comm, newcomm, fn);
}
SONDE_WEAK_ALIAS(Comm_connect)

int PMPI_Publish_name(const char* service_name, MPI_Info, const char* port_name) {
  SONDE_ENTER("MPI_Publish_name");
  if (!service_name || !valid_port(port_name)) return raise(nullptr, MPI_ERR_ARG, fn);
  int rc = publish_name(service_name, port_name);
  return rc ? raise(nullptr, rc, fn) : MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Publish_name)

int PMPI_Unpublish_name(const char* service_name, MPI_Info, const char* port_name) {
  SONDE_ENTER("MPI_Unpublish_name");
  if (!service_name || !port_name) return raise(nullptr, MPI_ERR_ARG, fn);
  int rc = unpublish_name(service_name);
  return rc ? raise(nullptr, rc, fn) : MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Unpublish_name)

int PMPI_Lookup_name(const char* service_name, MPI_Info, char* port_name) {
  SONDE_ENTER("MPI_Lookup_name");
  if (!service_name || !port_name) return raise(nullptr, MPI_ERR_ARG, fn);
  std::string port;
  int rc = lookup_name(service_name, &port);
  if (!rc) rc = copy_port(port, port_name);
  return rc ? raise(nullptr, rc, fn) : MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Lookup_name)

int PMPI_Comm_join(int fd, MPI_Comm* intercomm) {
  SONDE_ENTER("MPI_Comm_join");
  if (!intercomm || fd < 0) return raise(nullptr, MPI_ERR_ARG, fn);
  Comm* out = nullptr;
  int rc = join(fd, &out);
  if (rc) {
    *intercomm = MPI_COMM_NULL;
    return raise(nullptr, rc, fn);
  }
  *intercomm = out->handle;
  return MPI_SUCCESS;
}
SONDE_WEAK_ALIAS(Comm_join)

}  // extern "C"
