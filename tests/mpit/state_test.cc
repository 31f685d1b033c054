// Unit tests of mpit's building blocks: the string convention of section
// 15.3.3 and the generation-checked handle slots.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstring>

#include "mpit/state.h"

using sonde::mpit::copy_string;
using sonde::mpit::Slots;

TEST_CASE("copy_string writes at most len-1 characters and reports length + 1") {
  char buf[8];
  int len = sizeof buf;
  copy_string("abc", buf, &len);
  CHECK(std::strcmp(buf, "abc") == 0);
  CHECK(len == 4);
  len = 3;
  copy_string("abcdef", buf, &len);
  CHECK(std::strcmp(buf, "ab") == 0);
  CHECK(len == 7);
  len = 1;
  copy_string("abcdef", buf, &len);
  CHECK(buf[0] == '\0');
  CHECK(len == 7);
}

TEST_CASE("copy_string: null buffer or zero length only reports; null length ignores the buffer") {
  char buf[8] = "xxxxxxx";
  int len = 0;
  copy_string("abc", buf, &len);
  CHECK(len == 4);
  CHECK(buf[0] == 'x');
  len = 5;
  copy_string("abc", nullptr, &len);
  CHECK(len == 4);
  copy_string("abc", buf, nullptr);
  CHECK(buf[0] == 'x');
  len = 4;
  copy_string("", buf, &len);
  CHECK(buf[0] == '\0');
  CHECK(len == 1);
}

struct Value {
  int x = 0;
};

TEST_CASE("slots: a released slot's old handle no longer resolves, its reuse gets a new generation") {
  Slots<Value> slots;
  uint32_t a = slots.allocate();
  auto h = sonde::mpit::make<void*>(slots.at(a).generation, a);
  REQUIRE(slots.find(h) != nullptr);
  slots.find(h)->value.x = 7;
  slots.release(a);
  CHECK(slots.find(h) == nullptr);
  uint32_t b = slots.allocate();
  CHECK(b == a);
  CHECK(slots.at(b).value.x == 0);  // reset on reuse
  CHECK(slots.find(h) == nullptr);
  auto h2 = sonde::mpit::make<void*>(slots.at(b).generation, b);
  CHECK(slots.find(h2) != nullptr);
}

TEST_CASE("slots: null, out-of-range and forged handles do not resolve") {
  Slots<Value> slots;
  uint32_t a = slots.allocate();
  CHECK(slots.find(nullptr) == nullptr);
  CHECK(slots.find(sonde::mpit::make<void*>(1, a + 5)) == nullptr);
  CHECK(slots.find(sonde::mpit::make<void*>(slots.at(a).generation + 1, a)) == nullptr);
  CHECK(slots.find(reinterpret_cast<void*>(uintptr_t(-1))) == nullptr);
}
