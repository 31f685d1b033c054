// Process lists and accept offers as other processes write them
// (pmi/proc_list.h): what format_* write parses back to the same
// processes; anything else is refused with a reason and nothing taken.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "pmi/proc_list.h"

using namespace sonde::dynamic;

TEST_CASE("a formatted list and offer parse back to the same processes") {
  const std::vector<Proc> procs = {{"sonde-4f2a-0", 0}, {"prterun-host-4170@1", 2147483647}, {"a:b", 3}};
  std::vector<Proc> back;
  CHECK(parse_procs(format_procs(procs), &back) == "");
  CHECK(back == procs);
  std::string nonce;
  CHECK(parse_offer(format_offer(make_nonce(4321, 7), procs), &nonce, &back) == "");
  CHECK(nonce == "4321.7");
  CHECK(back == procs);
}

TEST_CASE("lists another process could not have formatted are refused, nothing taken") {
  const char* bad[] = {
      "",                // nobody
      "ns:0",            // no separator after the process
      "ns:4294967295 ",  // a rank past INT32_MAX (wrapped to -1 before)
      "ns:2147483648 ",  //
      "ns: ",            // no rank (read as rank 0 before)
      "ns:+1 ",          // not canonical
      "ns:01 ",          //
      "ns:-1 ",          //
      ":0 ",             // no namespace
      "ns:0 ns:0 ",      // the same process twice
      "ns:0  ",          // an empty item
      "n\ts:0 ",         // a control character in the namespace
      "ns:1 ns:x ",      // a bad second process
  };
  for (const char* text : bad) {
    std::vector<Proc> out = {{"left", 1}};
    CHECK_MESSAGE(parse_procs(text, &out) != "", "'", text, "'");
    CHECK(out.empty());
  }
  std::vector<Proc> out;
  CHECK(parse_procs(std::string(256, 'n') + ":0 ", &out) != "");  // longer than PMIx holds
  CHECK(parse_procs(std::string(255, 'n') + ":0 ", &out) == "");
}

TEST_CASE("offers with a malformed nonce or group are refused") {
  const char* bad[] = {"ns:0 ", "|ns:0 ", "12|ns:0 ", "0.1|ns:0 ", "12.|ns:0 ", "12.01|ns:0 ", "12.1|", "12.1|ns:0"};
  for (const char* text : bad) {
    std::string nonce;
    std::vector<Proc> group;
    CHECK_MESSAGE(parse_offer(text, &nonce, &group) != "", "'", text, "'");
    CHECK(group.empty());
  }
}
