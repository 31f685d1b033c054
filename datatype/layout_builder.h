// What the datatype files share: the builder of Layout trees, used by the
// predefined types (predefined.cc) and by the constructors (constructors.cc).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>

#include "datatype/datatype.h"

namespace sonde::engine::detail {

// Builds one Layout, keeping it compact: single-item sub-layouts are folded
// into their parent, dense repetitions of a leaf become one leaf, and
// adjacent leaves of one kind merge.
class LayoutBuilder {
 public:
  LayoutBuilder() : l_(std::make_shared<Layout>()) {}

  // `count` copies of `sub`, `stride` bytes apart, the first at `disp`.
  void add(int64_t disp, int64_t count, int64_t stride, const std::shared_ptr<const Layout>& sub) {
    if (count <= 0 || !sub || sub->size == 0) return;
    if (std::find(l_->owned.begin(), l_->owned.end(), sub) == l_->owned.end()) l_->owned.push_back(sub);
    Item x{disp, count, stride, sub->size, sub.get(), Basic::kNone};
    push(x);
  }
  void add_leaf(int64_t disp, int64_t bytes, Basic basic) {
    if (bytes > 0) push(Item{disp, 1, 0, bytes, nullptr, basic});
  }

  std::shared_ptr<const Layout> finish() {
    Layout& l = *l_;
    l.start.resize(l.items.size());
    int64_t pos = 0, elements = 0, runs = 0;
    bool dense = true;
    int64_t at = 0, next = 0;
    for (size_t i = 0; i < l.items.size(); ++i) {
      const Item& it = l.items[i];
      l.start[i] = pos;
      pos += it.count * it.size;
      elements += it.count * (it.sub ? it.sub->elements : it.size / int64_t(basic_size(it.basic)));
      runs += it.count * (it.sub ? it.sub->runs : 1);
      bool item_dense = (it.count == 1 || it.stride == it.size) && (!it.sub || it.sub->dense);
      int64_t first = it.disp + (it.sub ? it.sub->dense_at : 0);
      if (i == 0) at = first;
      if (!item_dense || (i > 0 && first != next)) dense = false;
      next = first + it.count * it.size;
    }
    l.size = pos;
    l.elements = elements;
    l.runs = runs;
    l.dense = dense;
    l.dense_at = l.items.empty() ? 0 : at;
    return std::move(l_);
  }

 private:
  void push(Item x) {
    // Fold single-item sub-layouts into this item while the result is
    // still one item.
    while (x.sub && x.sub->items.size() == 1) {
      const Item& in = x.sub->items[0];
      if (in.count == 1) {
        x = Item{x.disp + in.disp, x.count, x.stride, in.size, in.sub, in.basic};
      } else if (x.count == 1) {
        x = Item{x.disp + in.disp, in.count, in.stride, in.size, in.sub, in.basic};
      } else if (in.count * in.stride == x.stride) {
        x = Item{x.disp + in.disp, x.count * in.count, in.stride, in.size, in.sub, in.basic};
      } else {
        break;
      }
    }
    if (!x.sub && x.count > 1 && x.stride == x.size) {
      x.size *= x.count;
      x.count = 1;
    }
    if (x.count == 1) x.stride = 0;
    if (!l_->items.empty()) {
      Item& prev = l_->items.back();
      if (!prev.sub && !x.sub && prev.basic == x.basic && prev.count == 1 && x.count == 1 &&
          prev.disp + prev.size == x.disp) {
        prev.size += x.size;
        return;
      }
    }
    l_->items.push_back(x);
  }

  std::shared_ptr<Layout> l_;
};

}  // namespace sonde::engine::detail
