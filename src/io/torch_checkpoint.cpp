// A restricted unpickler for PyTorch zip checkpoints: a small pickle machine that understands
// the opcodes torch.save and torch.jit.save emit and rebuilds tensors, and refuses every other
// callable. TorchScript module objects (`__torch__.*` classes) are plain attribute holders:
// NEWOBJ makes an empty object and BUILD fills its attributes; no code is ever run.
#include <zip.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <variant>

#include "winokit/core/error.hpp"
#include "winokit/io/safetensors.hpp"

namespace winokit {

namespace fs = std::filesystem;

namespace {

// The module prefix of TorchScript's compiled classes (torch.jit.save archives).
constexpr const char* kTorchScriptModule = "__torch__.";

struct Value;
using Ref = std::shared_ptr<Value>;

struct Global {
  std::string module, name;
};
struct StorageRef {
  DType dtype = DType::F32;
  std::string key;
  std::int64_t numel = 0;
};
struct TensorRef {
  StorageRef storage;
  std::int64_t offset = 0;
  std::vector<std::int64_t> shape, stride;
};
struct Mark {};
using Items = std::vector<Ref>;
using Pairs = std::vector<std::pair<Ref, Ref>>;
// A TorchScript module: its class name and its attributes (filled by BUILD).
struct Object {
  std::string type;
  Pairs attributes;
};

// Containers nested deeper than this are refused (state dicts are a few levels deep). A deeper
// tree can still be built by mutating a container after it was nested (APPEND through the memo),
// so values are also destroyed iteratively: freeing any tree takes constant stack.
constexpr int kMaxNesting = 1000;

struct Value {
  std::variant<std::monostate, bool, std::int64_t, double, std::string, Items /*tuple or list*/,
               Pairs /*dict*/, Global, StorageRef, TensorRef, Mark, Object>
      v;
  int depth = 0;  // nesting when made (0 for a scalar)

  Value() = default;
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;
  ~Value() {
    std::vector<Ref> pending;
    take_children(pending);
    while (!pending.empty()) {
      Ref r = std::move(pending.back());
      pending.pop_back();
      if (r.use_count() == 1) r->take_children(pending);
    }  // r's own destructor now finds no children: no recursion
  }
  // Moves this value's children into `out` (leaving it a shallow husk).
  void take_children(std::vector<Ref>& out) {
    auto take_pairs = [&](Pairs& pairs) {
      for (auto& [k, x] : pairs) {
        out.push_back(std::move(k));
        out.push_back(std::move(x));
      }
      pairs.clear();
    };
    if (auto* items = std::get_if<Items>(&v)) {
      for (auto& x : *items)
        out.push_back(std::move(x));
      items->clear();
    } else if (auto* pairs = std::get_if<Pairs>(&v)) {
      take_pairs(*pairs);
    } else if (auto* object = std::get_if<Object>(&v)) {
      take_pairs(object->attributes);
    }
  }
};

int depth_of(const Items& items) {
  int d = 0;
  for (const auto& x : items)
    d = std::max(d, x->depth);
  return d + 1;
}

Ref make(auto x) {
  auto r = std::make_shared<Value>();
  r->v = std::move(x);
  return r;
}

class Unpickler {
 public:
  Unpickler(std::string_view data, std::string file) : d_(data), file_(std::move(file)) {}

  Ref load() {
    while (true) {
      if (pos_ >= d_.size()) fail("truncated pickle (no STOP)");
      const auto op = static_cast<unsigned char>(d_[pos_++]);
      switch (op) {
        case 0x80:
          bytes(1);
          break;  // PROTO
        case 0x95:
          bytes(8);
          break;  // FRAME
        case '.':
          return pop();  // STOP
        case '(':
          stack_.push_back(make(Mark{}));
          break;
        case ')':
          stack_.push_back(make(Items{}));
          break;
        case ']':
          stack_.push_back(make(Items{}));
          break;
        case '}':
          stack_.push_back(make(Pairs{}));
          break;
        case 't':
          push_container(pop_mark());
          break;
        case 0x85:
        case 0x86:
        case 0x87: {  // TUPLE1..3
          Items items(op - 0x84);
          for (auto it = items.rbegin(); it != items.rend(); ++it)
            *it = pop();
          push_container(std::move(items));
          break;
        }
        case 'a': {
          Ref v = pop();
          nest(*top(), *v);
          std::get<Items>(top()->v).push_back(v);
          break;
        }
        case 'e': {
          Items items = pop_mark();
          for (const auto& x : items)
            nest(*top(), *x);
          auto& list = std::get<Items>(top()->v);
          list.insert(list.end(), items.begin(), items.end());
          break;
        }
        case 's': {
          Ref v = pop(), k = pop();
          nest(*top(), *k);
          nest(*top(), *v);
          dict(top()).emplace_back(k, v);
          break;
        }
        case 'u': {
          Items items = pop_mark();
          if (items.size() % 2) fail("SETITEMS with an odd number of items");
          for (const auto& x : items)
            nest(*top(), *x);
          auto& pairs = dict(top());
          for (std::size_t i = 0; i < items.size(); i += 2)
            pairs.emplace_back(items[i], items[i + 1]);
          break;
        }
        case 'q':
          memo_[read<std::uint8_t>()] = top();
          break;
        case 'r':
          memo_[read<std::uint32_t>()] = top();
          break;
        case 0x94:
          memo_[memo_.size()] = top();
          break;  // MEMOIZE
        case 'h':
          stack_.push_back(memo(read<std::uint8_t>()));
          break;
        case 'j':
          stack_.push_back(memo(read<std::uint32_t>()));
          break;
        case 'J':
          stack_.push_back(make(static_cast<std::int64_t>(read<std::int32_t>())));
          break;
        case 'K':
          stack_.push_back(make(static_cast<std::int64_t>(read<std::uint8_t>())));
          break;
        case 'M':
          stack_.push_back(make(static_cast<std::int64_t>(read<std::uint16_t>())));
          break;
        case 0x8a: {  // LONG1: little-endian two's complement
          const std::size_t n = read<std::uint8_t>();
          if (n > 8) fail("integer too large");
          std::int64_t v = 0;
          for (std::size_t i = 0; i < n; ++i)
            v |= static_cast<std::int64_t>(static_cast<unsigned char>(bytes(1)[0])) << (8 * i);
          if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v -= std::int64_t{1} << (8 * n);
          stack_.push_back(make(v));
          break;
        }
        case 'N':
          stack_.push_back(make(std::monostate{}));
          break;
        case 0x88:
          stack_.push_back(make(true));
          break;
        case 0x89:
          stack_.push_back(make(false));
          break;
        case 'G': {  // BINFLOAT, big-endian
          std::uint64_t bits = 0;
          for (unsigned char c : bytes(8))
            bits = (bits << 8) | c;
          double v;
          std::memcpy(&v, &bits, 8);
          stack_.push_back(make(v));
          break;
        }
        case 'X':
          stack_.push_back(make(std::string(bytes(read<std::uint32_t>()))));
          break;
        case 0x8c:
          stack_.push_back(make(std::string(bytes(read<std::uint8_t>()))));
          break;
        case 0x8d:
          stack_.push_back(
              make(std::string(bytes(static_cast<std::size_t>(read<std::uint64_t>())))));
          break;
        case 'U':
          stack_.push_back(make(std::string(bytes(read<std::uint8_t>()))));
          break;
        case 'T':
          stack_.push_back(make(std::string(bytes(read<std::uint32_t>()))));
          break;
        case 'c': {
          std::string module = line(), name = line();
          stack_.push_back(make(allowed(module, name)));
          break;
        }
        case 0x93: {  // STACK_GLOBAL
          std::string name = text(pop()), module = text(pop());
          stack_.push_back(make(allowed(module, name)));
          break;
        }
        case 'Q':
          stack_.push_back(persistent(pop()));
          break;
        case 'R': {
          Ref args = pop(), callable = pop();
          stack_.push_back(call(callable, args));
          break;
        }
        case 0x81: {  // NEWOBJ: only TorchScript module classes, which become attribute holders
          Ref args = pop(), cls = pop();
          if (!std::holds_alternative<Global>(cls->v) ||
              std::get<Global>(cls->v).module.rfind(kTorchScriptModule, 0) != 0) {
            fail("NEWOBJ of something that is not a TorchScript module class");
          }
          const Global& g = std::get<Global>(cls->v);
          stack_.push_back(make(Object{g.module + "." + g.name, {}}));
          break;
        }
        case 'b': {  // BUILD: a TorchScript module's attributes; otherwise the state of an
                     // OrderedDict (_metadata) or a tensor, which is unused
          Ref state = pop();
          if (auto* object = std::get_if<Object>(&top()->v)) {
            if (!std::holds_alternative<Pairs>(state->v)) fail("module state is not a dict");
            nest(*top(), *state);
            object->attributes = std::get<Pairs>(state->v);
          }
          break;
        }
        default: {
          char hex[8];
          std::snprintf(hex, sizeof hex, "0x%02x", op);
          fail(std::string("unsupported pickle opcode ") + hex +
               " (not a plain PyTorch state dict)");
        }
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw InputError({file_, 0, ""}, why + " at byte " + std::to_string(pos_));
  }
  // The next n bytes. Compared as `n > size - pos` (pos <= size always): `pos + n` wraps for a
  // length near 2^64 (BINUNICODE8), and the check then passed.
  std::string_view bytes(std::size_t n) {
    if (n > d_.size() - pos_) fail("truncated pickle");
    auto out = d_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  template <typename T>
  T read() {
    T v;
    std::memcpy(&v, bytes(sizeof(T)).data(), sizeof(T));
    return v;
  }
  std::string line() {
    auto end = d_.find('\n', pos_);
    if (end == std::string_view::npos) fail("truncated GLOBAL");
    std::string s(d_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }
  // A container of these items, refused beyond kMaxNesting.
  void push_container(Items items) {
    const int depth = depth_of(items);
    if (depth > kMaxNesting) fail("containers nested deeper than " + std::to_string(kMaxNesting));
    auto r = make(std::move(items));
    r->depth = depth;
    stack_.push_back(std::move(r));
  }
  // `child` goes into `parent`: the parent's depth grows with it (refused beyond kMaxNesting).
  void nest(Value& parent, const Value& child) {
    if (child.depth + 1 > kMaxNesting)
      fail("containers nested deeper than " + std::to_string(kMaxNesting));
    parent.depth = std::max(parent.depth, child.depth + 1);
  }
  Ref pop() {
    if (stack_.empty()) fail("stack underflow");
    Ref r = stack_.back();
    stack_.pop_back();
    return r;
  }
  Ref& top() {
    if (stack_.empty()) fail("stack underflow");
    return stack_.back();
  }
  Items pop_mark() {
    Items items;
    while (true) {
      Ref r = pop();
      if (std::holds_alternative<Mark>(r->v)) break;
      items.push_back(r);
    }
    return {items.rbegin(), items.rend()};
  }
  Pairs& dict(Ref& r) {
    if (!std::holds_alternative<Pairs>(r->v)) fail("SETITEM on something that is not a dict");
    return std::get<Pairs>(r->v);
  }
  Ref memo(std::size_t i) {
    auto it = memo_.find(i);
    if (it == memo_.end()) fail("unknown memo entry");
    return it->second;
  }
  std::string text(const Ref& r) {
    if (!std::holds_alternative<std::string>(r->v)) fail("expected a string");
    return std::get<std::string>(r->v);
  }
  std::int64_t integer(const Ref& r) {
    if (!std::holds_alternative<std::int64_t>(r->v)) fail("expected an integer");
    return std::get<std::int64_t>(r->v);
  }
  std::vector<std::int64_t> ints(const Ref& r) {
    if (!std::holds_alternative<Items>(r->v)) fail("expected a tuple of integers");
    std::vector<std::int64_t> out;
    for (const auto& x : std::get<Items>(r->v))
      out.push_back(integer(x));
    return out;
  }
  // Only the globals a state dict of tensors needs, and TorchScript module classes (only ever
  // instantiated empty by NEWOBJ); everything else is refused by name.
  Global allowed(const std::string& module, const std::string& name) {
    static const std::map<std::string, std::vector<std::string>> kAllowed = {
        {"collections", {"OrderedDict"}},
        {"torch._utils", {"_rebuild_tensor_v2", "_rebuild_parameter"}},
        {"torch",
         {"FloatStorage", "HalfStorage", "BFloat16Storage", "DoubleStorage", "LongStorage",
          "IntStorage"}}};
    if (module.rfind(kTorchScriptModule, 0) == 0) return {module, name};
    auto it = kAllowed.find(module);
    if (it == kAllowed.end() ||
        std::find(it->second.begin(), it->second.end(), name) == it->second.end()) {
      fail("refusing to load " + module + "." + name +
           " (only tensors are read from PyTorch checkpoints; convert the checkpoint to "
           "safetensors)");
    }
    return {module, name};
  }
  Ref persistent(const Ref& pid) {
    if (!std::holds_alternative<Items>(pid->v)) fail("unexpected persistent id");
    const auto& t = std::get<Items>(pid->v);
    if (t.size() < 5 || text(t[0]) != "storage" || !std::holds_alternative<Global>(t[1]->v)) {
      fail("unexpected persistent id");
    }
    const Global& type = std::get<Global>(t[1]->v);
    static const std::map<std::string, DType> kStorages = {
        {"FloatStorage", DType::F32},     {"HalfStorage", DType::F16},
        {"BFloat16Storage", DType::BF16}, {"DoubleStorage", DType::F64},
        {"LongStorage", DType::I64},      {"IntStorage", DType::I32}};
    auto known = kStorages.find(type.name);
    if (type.module != "torch" || known == kStorages.end()) fail("unexpected storage type");
    StorageRef s;
    s.dtype = known->second;
    s.key = text(t[2]);
    s.numel = integer(t[4]);
    return make(s);
  }
  Ref call(const Ref& callable, const Ref& args) {
    if (!std::holds_alternative<Global>(callable->v) || !std::holds_alternative<Items>(args->v)) {
      fail("REDUCE of something that is not an allowed global");
    }
    const Global& g = std::get<Global>(callable->v);
    const Items& a = std::get<Items>(args->v);
    if (g.module.rfind(kTorchScriptModule, 0) == 0) {
      fail("refusing to call " + g.module + "." + g.name + " (TorchScript classes are only read)");
    }
    if (g.name == "OrderedDict") return make(Pairs{});
    if (g.name == "_rebuild_parameter") {
      if (a.empty() || !std::holds_alternative<TensorRef>(a[0]->v))
        fail("_rebuild_parameter without a tensor");
      return a[0];
    }
    if (g.name == "_rebuild_tensor_v2") {
      if (a.size() < 4 || !std::holds_alternative<StorageRef>(a[0]->v))
        fail("malformed _rebuild_tensor_v2 call");
      TensorRef t;
      t.storage = std::get<StorageRef>(a[0]->v);
      t.offset = integer(a[1]);
      t.shape = ints(a[2]);
      t.stride = ints(a[3]);
      return make(t);
    }
    fail("refusing to call " + g.module + "." + g.name);
  }

  std::string_view d_;
  std::string file_;
  std::size_t pos_ = 0;
  std::vector<Ref> stack_;
  std::map<std::size_t, Ref> memo_;
};

// Walks a TorchScript module tree depth first; attributes that are neither modules nor tensors
// (the `training` flags, ints) are skipped.
void collect_module_tensors(const Object& object, const std::string& prefix, int depth,
                            std::vector<std::pair<std::string, TensorRef>>& out,
                            const std::string& file) {
  constexpr int kMaxDepth = 64;  // real module trees are a few levels deep; memo cycles are not
  if (depth > kMaxDepth) throw InputError({file, 0, ""}, "TorchScript module tree too deep");
  for (const auto& [k, v] : object.attributes) {
    if (!std::holds_alternative<std::string>(k->v)) continue;
    const std::string name = prefix + std::get<std::string>(k->v);
    if (const auto* t = std::get_if<TensorRef>(&v->v)) {
      out.emplace_back(name, *t);
    } else if (const auto* child = std::get_if<Object>(&v->v)) {
      collect_module_tensors(*child, name + ".", depth + 1, out, file);
    }
  }
}

constexpr std::size_t kReadChunk = 1 << 20;
constexpr std::size_t kMaxPickleBytes = 256ull << 20;  // data.pkl of the largest CLIP: a few MB
// torch.save stores tensor data uncompressed; a member that inflates more than this is not a
// checkpoint (deflate itself reaches about 1032:1 on zeros: a decompression bomb).
constexpr std::uint64_t kMaxInflation = 64;
constexpr int kMaxDims = 64;

// An archive member read as a stream: at most `want` bytes, never more than the member holds,
// growing the buffer only as data actually comes (a lying header costs nothing).
struct ZipReader {
  zip_t* z = nullptr;
  ~ZipReader() {
    if (z != nullptr) zip_discard(z);
  }
  // check_inflation: a storage (torch.save stores them); data.pkl is capped by size instead.
  std::string read(const std::string& member, const std::string& file, std::uint64_t want,
                   bool check_inflation = true) const {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat(z, member.c_str(), 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
      throw InputError({file, 0, ""}, "missing archive member " + member);
    if (st.size < want) {
      throw InputError({file, 0, member}, "archive member holds " + std::to_string(st.size) +
                                              " bytes; its tensors need " + std::to_string(want));
    }
    if (check_inflation && (st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method != ZIP_CM_STORE &&
        (st.valid & ZIP_STAT_COMP_SIZE) && want > kMaxInflation * st.comp_size + kReadChunk) {
      throw InputError({file, 0, member}, "archive member inflates " + std::to_string(st.size) +
                                              " bytes from " + std::to_string(st.comp_size) +
                                              " (more than any checkpoint: a decompression bomb?)");
    }
    zip_file_t* f = zip_fopen(z, member.c_str(), 0);
    if (f == nullptr) throw InputError({file, 0, ""}, "cannot open archive member " + member);
    std::string out;
    while (out.size() < want) {
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(kReadChunk, want - out.size()));
      const std::size_t at = out.size();
      out.resize(at + n);
      const zip_int64_t got = zip_fread(f, out.data() + at, n);
      if (got <= 0) {
        zip_fclose(f);
        throw InputError({file, 0, ""}, "truncated member " + member);
      }
      out.resize(at + static_cast<std::size_t>(got));
    }
    zip_fclose(f);
    return out;
  }
};

// a * b and a + b on non-negative sizes, or false when beyond int64.
bool mul(std::int64_t a, std::int64_t b, std::int64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}
bool add(std::int64_t a, std::int64_t b, std::int64_t& out) {
  return !__builtin_add_overflow(a, b, &out);
}

// A tensor checked against its storage: every size, stride and offset non-negative, no
// overflow, and its last element inside the storage.
struct Placed {
  std::int64_t numel = 0;
  std::uint64_t need = 0;  // bytes of the storage it reaches (0 when empty)
  bool contiguous = true;
};

Placed place(const TensorRef& t, const std::string& file, const std::string& name) {
  auto bad = [&](const std::string& why) -> InputError { return InputError({file, 0, name}, why); };
  if (t.shape.size() != t.stride.size())
    throw bad("shape " + shape_text(t.shape) + " and stride " + shape_text(t.stride) +
              " differ in length");
  if (t.shape.size() > static_cast<std::size_t>(kMaxDims)) throw bad("too many dimensions");
  const auto elem = static_cast<std::int64_t>(dtype_size(t.storage.dtype));
  std::int64_t storage_bytes = 0;
  if (t.storage.numel < 0 || !mul(t.storage.numel, elem, storage_bytes))
    throw bad("storage size " + std::to_string(t.storage.numel) + " out of range");
  if (t.offset < 0) throw bad("negative storage offset " + std::to_string(t.offset));
  Placed p;
  p.numel = 1;
  std::int64_t last = t.offset, expect = 1;
  for (std::size_t d = t.shape.size(); d-- > 0;) {
    if (t.shape[d] < 0) throw bad("negative size in shape " + shape_text(t.shape));
    if (t.stride[d] < 0) throw bad("negative stride in " + shape_text(t.stride));
    if (!mul(p.numel, t.shape[d], p.numel))
      throw bad("shape " + shape_text(t.shape) + " too large");
    if (t.shape[d] != 1 && t.stride[d] != expect) p.contiguous = false;
    if (!mul(expect, t.shape[d], expect)) throw bad("shape too large");
    std::int64_t reach = 0;
    if (t.shape[d] > 0 && (!mul(t.shape[d] - 1, t.stride[d], reach) || !add(last, reach, last)))
      throw bad("stride " + shape_text(t.stride) + " reaches beyond any storage");
  }
  std::int64_t bytes = 0;
  if (!mul(p.numel, elem, bytes)) throw bad("shape " + shape_text(t.shape) + " too large");
  if (p.numel == 0) return p;
  std::int64_t end = 0;
  if (!add(last, 1, end) || !mul(end, elem, end) || end > storage_bytes)
    throw bad("tensor extends past its storage");
  p.need = static_cast<std::uint64_t>(end);
  return p;
}

// The checkpoint file itself: a regular file (a FIFO would hang zip_open).
void check_regular(const fs::path& path, const std::string& file) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) throw IoError(file + ": not found");
  if (!fs::is_regular_file(status)) throw IoError(file + ": not a regular file");
}

}  // namespace

SafeTensors SafeTensors::open_torch(const fs::path& path) {
  const std::string file = path.string();
  check_regular(path, file);
  int err = 0;
  ZipReader zip;
  zip.z = zip_open(file.c_str(), ZIP_RDONLY, &err);
  if (zip.z == nullptr) {
    if (!fs::exists(path)) throw IoError(file + ": not found");
    throw InputError({file, 0, ""},
                     "not a PyTorch zip checkpoint (files saved before PyTorch 1.6 are not read)",
                     "re-save it with a recent PyTorch, or convert it to safetensors");
  }
  std::string pkl_member;
  const zip_int64_t n = zip_get_num_entries(zip.z, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const std::string name = zip_get_name(zip.z, static_cast<zip_uint64_t>(i), 0);
    if (name.size() >= 9 && name.compare(name.size() - 9, 9, "/data.pkl") == 0) pkl_member = name;
  }
  if (pkl_member.empty()) throw InputError({file, 0, ""}, "no data.pkl in the archive");
  const std::string prefix = pkl_member.substr(0, pkl_member.size() - 8);  // ends with '/'
  zip_stat_t pkl_stat;
  zip_stat_init(&pkl_stat);
  if (zip_stat(zip.z, pkl_member.c_str(), 0, &pkl_stat) != 0 || pkl_stat.size > kMaxPickleBytes)
    throw InputError({file, 0, pkl_member}, "missing, or larger than 256 MiB");
  const std::string pickle = zip.read(pkl_member, file, pkl_stat.size, false);
  Ref root;
  try {
    root = Unpickler(pickle, file).load();
  } catch (const std::bad_variant_access&) {
    // An opcode applied to a value of the wrong kind (APPEND on a dict, ...): found by fuzzing.
    throw InputError({file, 0, ""}, "malformed pickle: an operation on a value of the wrong type");
  }
  // name -> tensor, from a state dict or from a TorchScript module's attributes.
  std::vector<std::pair<std::string, TensorRef>> found;
  SafeTensors st;
  if (std::holds_alternative<Object>(root->v)) {
    // A torch.jit.save archive: parameters and buffers are the module tree's tensor attributes,
    // named by their path ("visual.layer1.0.conv1.weight"), as state_dict() names them.
    collect_module_tensors(std::get<Object>(root->v), "", 0, found, file);
    st.metadata_["format"] = "torchscript";
  } else {
    if (!std::holds_alternative<Pairs>(root->v))
      throw InputError({file, 0, ""}, "the checkpoint is not a dict");
    const Pairs* entries = &std::get<Pairs>(root->v);
    for (const auto& [k, v] : *entries) {
      if (std::holds_alternative<std::string>(k->v) &&
          std::get<std::string>(k->v) == "state_dict" && std::holds_alternative<Pairs>(v->v)) {
        entries = &std::get<Pairs>(v->v);
        break;
      }
    }
    for (const auto& [k, v] : *entries) {
      if (!std::holds_alternative<std::string>(k->v) || !std::holds_alternative<TensorRef>(v->v))
        continue;
      std::string name = std::get<std::string>(k->v);
      if (name.rfind("module.", 0) == 0) name = name.substr(7);
      found.emplace_back(name, std::get<TensorRef>(v->v));
    }
  }
  st.files_.push_back(file);
  // Every tensor placed in its storage first; then each storage read once, only as far as its
  // tensors reach.
  std::vector<Placed> placed;
  std::map<std::string, std::uint64_t> need;
  for (const auto& [name, t] : found) {
    placed.push_back(place(t, file, name));
    std::uint64_t& reach = need[t.storage.key];
    reach = std::max(reach, placed.back().need);
  }
  std::map<std::string, const std::string*> storages;
  for (const auto& [key, bytes] : need) {
    st.owned_.push_back(
        std::make_unique<std::string>(zip.read(prefix + "data/" + key, file, bytes)));
    storages[key] = st.owned_.back().get();
  }
  for (std::size_t i = 0; i < found.size(); ++i) {
    const auto& [name, t] = found[i];
    const Placed& p = placed[i];
    const std::string& bytes = *storages.at(t.storage.key);
    const std::size_t elem = dtype_size(t.storage.dtype);
    TensorView view;
    view.name = name;
    view.dtype = t.storage.dtype;
    view.shape = t.shape;
    view.file = file;
    const auto numel = static_cast<std::size_t>(p.numel);
    // Contiguous (row-major) tensors are used in place; others are copied into that order.
    if (p.contiguous || numel == 0) {
      view.data = reinterpret_cast<const std::uint8_t*>(bytes.data()) +
                  (numel == 0 ? 0 : static_cast<std::size_t>(t.offset) * elem);
    } else {
      auto copy = std::make_unique<std::string>(numel * elem, '\0');
      std::vector<std::int64_t> index(t.shape.size(), 0);
      for (std::size_t e = 0; e < numel; ++e) {
        std::int64_t src = t.offset;  // <= the last element place() checked
        for (std::size_t d = 0; d < index.size(); ++d)
          src += index[d] * t.stride[d];
        std::memcpy(copy->data() + e * elem, bytes.data() + static_cast<std::size_t>(src) * elem,
                    elem);
        for (std::size_t d = index.size(); d-- > 0;) {
          if (++index[d] < t.shape[d]) break;
          index[d] = 0;
        }
      }
      view.data = reinterpret_cast<const std::uint8_t*>(copy->data());
      st.owned_.push_back(std::move(copy));
    }
    view.bytes = numel * elem;
    st.tensors_[name] = std::move(view);
  }
  if (st.tensors_.empty()) throw InputError({file, 0, ""}, "no tensors in the checkpoint");
  return st;
}

}  // namespace winokit
