// libtorch's own view of a .pt zip file as a canonical description (spec/canonical.md).
//
//   torchfmt-libtorch PATH        torch::pickle_load(<the file's bytes>), then the loaded IValue walked
//   torchfmt-libtorch --jit PATH  torch::jit::load(PATH) (compiles the archive's code: trusted files only)
//
// Everything printed comes from the IValue libtorch returns: no check of our own is made on the file.
// The loaded tree is walked and written with explicit stacks, never by recursion: values nest as deep as
// the file makes them (100,000 levels in the adv-pickle-deep-* cases), and a crash of this program's own
// code would be reported as libtorch's.
// Exit 0 with the description on stdout; exit 1 with one stderr line "error: <libtorch's message>" when
// libtorch throws (run.py maps it onto the closed set of codes); exit 2 with "unsupported: <feature>"
// for a loaded value the description has no form for, or a TorchScript archive without --jit.

#include <ATen/ATen.h>
#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/in_memory_adapter.h>
#include <openssl/evp.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/version.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

struct Declined : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string sha256_hex(const void* data, size_t n) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data, n, md, &len, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("EVP_Digest failed");
  }
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 15];
  }
  return out;
}

// c10's ScalarType names -> the dtype table's names (spec/tensors.md#tensors-dtype-table).
const std::map<std::string, std::string>& dtype_names() {
  static const std::map<std::string, std::string> names = {
      {"Bool", "bool"}, {"Byte", "uint8"}, {"Char", "int8"}, {"Short", "int16"}, {"Int", "int32"},
      {"Long", "int64"}, {"UInt16", "uint16"}, {"UInt32", "uint32"}, {"UInt64", "uint64"},
      {"Half", "float16"}, {"BFloat16", "bfloat16"}, {"Float", "float32"}, {"Double", "float64"},
      {"ComplexHalf", "complex32"}, {"ComplexFloat", "complex64"}, {"ComplexDouble", "complex128"},
      {"Float8_e4m3fn", "float8_e4m3fn"}, {"Float8_e5m2", "float8_e5m2"},
      {"Float8_e4m3fnuz", "float8_e4m3fnuz"}, {"Float8_e5m2fnuz", "float8_e5m2fnuz"},
      {"Float8_e8m0fnu", "float8_e8m0fnu"}, {"Float4_e2m1fn_x2", "float4_e2m1fn_x2"},
      {"Bits1x8", "bits1x8"}, {"Bits2x4", "bits2x4"}, {"Bits4x2", "bits4x2"}, {"Bits8", "bits8"},
      {"Bits16", "bits16"}, {"QInt8", "qint8"}, {"QUInt8", "quint8"}, {"QInt32", "qint32"},
      {"QUInt4x2", "quint4x2"}, {"QUInt2x4", "quint2x4"}};
  return names;
}

std::string dtype_name(at::ScalarType t) {
  auto it = dtype_names().find(c10::toString(t));
  if (it == dtype_names().end()) throw Declined(std::string("dtype ") + c10::toString(t));
  return it->second;
}

// JSON string literal of a std::string holding UTF-8 (surrogates, which Python pickles, as \uXXXX).
std::string json_string(const std::string& s) {
  std::string out = "\"";
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  char buf[16];
  while (i < n) {
    unsigned c = p[i];
    if (c < 0x80) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20 || c == 0x7f) {
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    int len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    if (len == 0 || c > 0xf4 || i + len > n) throw Declined("a string that is not UTF-8");
    unsigned cp = c & (0xff >> (len + 1));
    for (int k = 1; k < len; ++k) {
      if ((p[i + k] & 0xc0) != 0x80) throw Declined("a string that is not UTF-8");
      cp = (cp << 6) | (p[i + k] & 0x3f);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
      throw Declined("a string that is not UTF-8");
    if (cp >= 0xd800 && cp <= 0xdfff) {
      std::snprintf(buf, sizeof buf, "\\u%04x", cp);
      out += buf;
    } else {
      out.append(s, i, len);
    }
    i += len;
  }
  return out + "\"";
}

std::string format_float(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x);  // shortest round-trip form
  return std::string(buf, r.ptr);
}

std::string quoted_float(double x) { return json_string(format_float(x)); }

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "," : "") + parts[i];
  return out;
}

std::string int_array(c10::IntArrayRef a) {
  std::vector<std::string> parts;
  for (auto v : a) parts.push_back(std::to_string(v));
  return "[" + join(parts) + "]";
}

// The bytes of a tensor's logical elements, as torch presents them (spec/canonical.md#canonical-hash).
std::string tensor_sha256(at::Tensor t) {
  if (t.is_quantized()) t = t.int_repr();
  if (t.numel() == 0) return sha256_hex("", 0);
  if (t.is_complex() && t.is_conj()) t = t.resolve_conj();
  if (t.is_neg()) t = t.resolve_neg();
  t = t.contiguous();
  return sha256_hex(t.data_ptr(), t.numel() * t.element_size());
}

class Describer {
 public:
  std::map<std::string, std::string> storages;  // id -> record JSON

  void walk(const c10::IValue& root) {
    std::vector<c10::IValue> stack{root};
    while (!stack.empty()) {
      c10::IValue v = stack.back();
      stack.pop_back();
      if (shareable(v)) {
        keep_.push_back(v);
        if (++count_[key(v)] > 1) continue;
      }
      children(v, stack);
    }
  }

  // The value's canonical JSON, written left to right with an explicit stack of what is left to write
  // (containers nest as deep as the file makes them: no recursion over the loaded tree).
  std::string emit(const c10::IValue& root) {
    std::string out;
    std::vector<Piece> todo;
    todo.push_back(Piece{root, {}, true});
    while (!todo.empty()) {
      Piece p = std::move(todo.back());
      todo.pop_back();
      if (!p.is_value) {
        out += p.text;
        continue;
      }
      const c10::IValue& v = p.value;
      if (!(v.isTuple() || v.isList() || v.isGenericDict() || v.isObject())) {
        out += leaf(v);
        continue;
      }
      // spec/canonical.md#canonical-sharing: a container seen again is a ref to its first occurrence
      std::string id;
      if (shareable(v) && count_[key(v)] > 1) {
        auto it = ids_.find(key(v));
        if (it != ids_.end()) {
          out += "{\"type\":\"ref\",\"id\":" + json_string(it->second) + "}";
          continue;
        }
        id = "o" + std::to_string(ids_.size());
        ids_[key(v)] = id;
      }
      std::string tail = id.empty() ? "}" : ",\"id\":" + json_string(id) + "}";
      open_container(v, tail, out, todo);
    }
    return out;
  }

 private:
  // One thing left to write: a value, or text.
  struct Piece {
    c10::IValue value;
    std::string text;
    bool is_value = false;
  };

  static Piece text(std::string s) { return Piece{c10::IValue(), std::move(s), false}; }

  // Writes a container's opening text to ``out`` and pushes its items and closing text (``tail`` ends
  // it: "}" or the id member and "}") onto ``todo``, last first.
  void open_container(const c10::IValue& v, const std::string& tail, std::string& out,
                      std::vector<Piece>& todo) {
    std::vector<Piece> pieces;  // in writing order; pushed reversed
    if (v.isTuple() || v.isList()) {
      out += v.isTuple() ? "{\"type\":\"tuple\",\"items\":[" : "{\"type\":\"list\",\"items\":[";
      std::vector<c10::IValue> xs;
      if (v.isTuple()) {
        const auto& e = v.toTupleRef().elements();
        xs.assign(e.begin(), e.end());
      } else {
        auto ref = v.toListRef();
        xs.assign(ref.begin(), ref.end());
      }
      for (size_t i = 0; i < xs.size(); ++i) {
        if (i) pieces.push_back(text(","));
        pieces.push_back(Piece{xs[i], {}, true});
      }
      pieces.push_back(text("]" + tail));
    } else if (v.isGenericDict()) {
      out += "{\"type\":\"dict\",\"items\":[";
      bool first = true;
      for (const auto& kv : v.toGenericDict()) {
        pieces.push_back(text(first ? "[" : ",["));
        pieces.push_back(Piece{kv.key(), {}, true});
        pieces.push_back(text(","));
        pieces.push_back(Piece{kv.value(), {}, true});
        pieces.push_back(text("]"));
        first = false;
      }
      pieces.push_back(text("]" + tail));
    } else {  // a TorchScript module or class instance: its attributes in slot order
      auto obj = v.toObject();
      auto type = obj->type();
      out += "{\"type\":\"object\",\"class\":" + json_string(type->name()->qualifiedName()) +
             ",\"args\":[],\"state\":{\"type\":\"dict\",\"items\":[";
      for (size_t i = 0; i < obj->slots().size(); ++i) {
        pieces.push_back(text(std::string(i ? ",[" : "[") + "{\"type\":\"str\",\"value\":" +
                              json_string(type->getAttributeName(i)) + "},"));
        pieces.push_back(Piece{obj->getSlot(i), {}, true});
        pieces.push_back(text("]"));
      }
      pieces.push_back(text("]}" + tail));
    }
    for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) todo.push_back(std::move(*it));
  }

  // A value that holds no container (a tensor's component tensors are emitted from tensor()).
  std::string leaf(const c10::IValue& v) {
    if (shareable(v) && count_[key(v)] > 1) {
      auto it = ids_.find(key(v));
      if (it != ids_.end()) return "{\"type\":\"ref\",\"id\":" + json_string(it->second) + "}";
      std::string id = "o" + std::to_string(ids_.size());
      ids_[key(v)] = id;
      std::string body = value(v);
      body.pop_back();
      return body + ",\"id\":" + json_string(id) + "}";
    }
    return value(v);
  }

  std::unordered_map<const void*, int> count_;
  std::unordered_map<const void*, std::string> ids_;
  std::unordered_map<const void*, std::string> storage_ids_;
  std::vector<c10::IValue> keep_;

  static const void* key(const c10::IValue& v) {
    if (v.isTensor()) return v.toTensor().unsafeGetTensorImpl();
    return v.internalToPointer();
  }

  // spec/canonical.md#canonical-sharing: mutable containers, tensors and objects.
  static bool shareable(const c10::IValue& v) {
    return v.isList() || v.isGenericDict() || (v.isTensor() && v.toTensor().defined()) || v.isObject();
  }

  static void children(const c10::IValue& v, std::vector<c10::IValue>& out) {
    if (v.isList()) {
      for (const auto& x : v.toListRef()) out.push_back(x);
    } else if (v.isTuple()) {
      for (const auto& x : v.toTupleRef().elements()) out.push_back(x);
    } else if (v.isGenericDict()) {
      for (const auto& kv : v.toGenericDict()) {
        out.push_back(kv.key());
        out.push_back(kv.value());
      }
    } else if (v.isObject()) {
      auto obj = v.toObject();
      for (size_t i = 0; i < obj->slots().size(); ++i) out.push_back(obj->getSlot(i));
    }
  }

  std::string value(const c10::IValue& v) {
    if (v.isNone()) return "{\"type\":\"none\"}";
    if (v.isBool()) return std::string("{\"type\":\"bool\",\"value\":") + (v.toBool() ? "true" : "false") + "}";
    if (v.isInt()) return "{\"type\":\"int\",\"value\":\"" + std::to_string(v.toInt()) + "\"}";
    if (v.isDouble()) return "{\"type\":\"float\",\"value\":" + quoted_float(v.toDouble()) + "}";
    if (v.isString()) return "{\"type\":\"str\",\"value\":" + json_string(v.toStringRef()) + "}";
    if (v.isTensor()) {
      const auto& t = v.toTensor();
      if (!t.defined()) return "{\"type\":\"none\"}";
      return tensor(t);
    }
    if (v.isStorage()) {
      auto s = v.toStorage();
      return "{\"type\":\"storage\",\"storage\":" + json_string(storage_record(s, at::kByte)) + "}";
    }
    if (v.isComplexDouble()) {
      auto c = v.toComplexDouble();
      return "{\"type\":\"object\",\"class\":\"builtins.complex\",\"args\":[{\"type\":\"float\",\"value\":" +
             quoted_float(c.real()) + "},{\"type\":\"float\",\"value\":" + quoted_float(c.imag()) +
             "}],\"state\":null}";
    }
    if (v.isDevice()) {
      auto d = v.toDevice();
      std::string args = "{\"type\":\"str\",\"value\":" + json_string(c10::DeviceTypeName(d.type(), true)) + "}";
      if (d.has_index()) args += ",{\"type\":\"int\",\"value\":\"" + std::to_string(d.index()) + "\"}";
      return "{\"type\":\"object\",\"class\":\"torch.device\",\"args\":[" + args + "],\"state\":null}";
    }
    throw Declined(std::string("no canonical form for a loaded IValue of kind ") + v.tagKind());
  }

  std::string storage_record(const c10::Storage& s, at::ScalarType dtype) {
    const void* k = s.unsafeGetStorageImpl();
    auto it = storage_ids_.find(k);
    std::string name = dtype_name(dtype);
    if (it != storage_ids_.end()) {
      if (storages[it->second].find("\"dtype\":" + json_string(name) + ",") == std::string::npos)
        throw Declined("one storage viewed as two dtypes");
      return it->second;
    }
    std::string id = "s" + std::to_string(storage_ids_.size());
    storage_ids_[k] = id;
    if (s.device().type() == c10::DeviceType::Meta) throw Declined("a storage on the meta device");
    size_t nbytes = s.nbytes();
    std::string device = s.device().str();
    size_t itemsize = c10::elementSize(dtype);
    storages[id] = "{\"dtype\":" + json_string(name) + ",\"numel\":" + std::to_string(nbytes / itemsize) +
                   ",\"device\":" + json_string(device) + ",\"sha256\":\"" +
                   sha256_hex(nbytes ? s.data() : "", nbytes) + "\"}";
    return id;
  }

  std::string tensor(const at::Tensor& t) {
    if (t.is_meta()) {
      if (t.layout() != at::kStrided || t.is_quantized()) throw Declined("a meta tensor that is not dense");
      return "{\"type\":\"meta_tensor\",\"dtype\":" + json_string(dtype_name(t.scalar_type())) +
             ",\"shape\":" + int_array(t.sizes()) + ",\"stride\":" + int_array(t.strides()) +
             ",\"requires_grad\":" + (t.requires_grad() ? "true" : "false") + "}";
    }
    if (t.is_nested()) throw Declined("nested tensor (no version-0 form)");
    if (t.layout() == at::kSparse) {
      return "{\"type\":\"sparse_tensor\",\"layout\":\"sparse_coo\",\"dtype\":" +
             json_string(dtype_name(t.scalar_type())) + ",\"shape\":" + int_array(t.sizes()) +
             ",\"requires_grad\":" + (t.requires_grad() ? "true" : "false") + ",\"indices\":" +
             emit(t._indices()) + ",\"values\":" + emit(t._values()) + ",\"is_coalesced\":" +
             (t.is_coalesced() ? "true" : "false") + "}";
    }
    if (t.layout() != at::kStrided) throw Declined(std::string("tensor layout ") + c10::str(t.layout()));
    std::string sid = storage_record(t.storage(), t.scalar_type());
    std::string device = t.storage().device().str();
    std::string out = std::string("{\"type\":") + (t.is_quantized() ? "\"quantized_tensor\"" : "\"tensor\"") +
                      ",\"dtype\":" + json_string(dtype_name(t.scalar_type())) + ",\"shape\":" +
                      int_array(t.sizes()) + ",\"stride\":" + int_array(t.strides()) +
                      ",\"storage_offset\":" + std::to_string(t.storage_offset()) + ",\"storage\":" +
                      json_string(sid) + ",\"device\":" + json_string(device) + ",\"requires_grad\":" +
                      (t.requires_grad() ? "true" : "false") + ",\"sha256\":\"" + tensor_sha256(t) + "\"";
    if (t.is_quantized()) {
      auto scheme = t.qscheme();
      if (scheme == at::kPerTensorAffine || scheme == at::kPerTensorSymmetric) {
        out += ",\"qscheme\":\"" + std::string(scheme == at::kPerTensorAffine ? "per_tensor_affine" : "per_tensor_symmetric") +
               "\",\"scale\":" + quoted_float(t.q_scale()) + ",\"zero_point\":" + std::to_string(t.q_zero_point());
      } else if (scheme == at::kPerChannelAffine || scheme == at::kPerChannelSymmetric ||
                 scheme == at::kPerChannelAffineFloatQParams) {
        out += ",\"qscheme\":\"" +
               std::string(scheme == at::kPerChannelAffine ? "per_channel_affine"
                           : scheme == at::kPerChannelSymmetric ? "per_channel_symmetric"
                                                                : "per_channel_affine_float_qparams") +
               "\",\"scales\":" + emit(t.q_per_channel_scales()) + ",\"zero_points\":" +
               emit(t.q_per_channel_zero_points()) + ",\"axis\":" + std::to_string(t.q_per_channel_axis());
      } else {
        throw Declined("qscheme " + c10::toString(scheme));
      }
    }
    return out + "}";
  }
};

int fail(int status, const std::string& prefix, const std::string& message) {
  std::string line = message;
  for (auto& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  if (line.size() > 600) line.resize(600);
  std::cerr << prefix << ": " << line << std::endl;
  return status;
}

std::string describe(const c10::IValue& root, const std::string& fmt) {
  Describer d;
  d.walk(root);
  std::string object = d.emit(root);
  std::vector<std::string> parts;
  for (const auto& [id, record] : d.storages) parts.push_back(json_string(id) + ":" + record);
  return "{\"description_version\":0,\"format\":" + json_string(fmt) + ",\"objects\":[" + object +
         "],\"storages\":{" + join(parts) + "}}";
}

}  // namespace

int main(int argc, char** argv) {
  bool jit = argc == 3 && std::string(argv[1]) == "--jit";
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::cout << "libtorch " << TORCH_VERSION << std::endl;
    return 0;
  }
  if (!(argc == 2 || jit)) return fail(3, "usage", "torchfmt-libtorch [--jit] PATH");
  std::string path = argv[argc - 1];
  try {
    std::string out;
    if (jit) {
      torch::jit::Module m = torch::jit::load(path, c10::Device("cpu"));
      out = describe(m._ivalue(), "pt-torchscript");
    } else {
      std::ifstream f(path, std::ios::binary);
      if (!f) return fail(3, "io-error", "cannot open " + path);
      std::vector<char> data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      {  // libtorch's own zip reader says whether this is a TorchScript archive
        caffe2::serialize::PyTorchStreamReader reader(
            std::make_shared<caffe2::serialize::MemoryReadAdapter>(data.data(), data.size()));
        if (reader.hasRecord("constants.pkl"))
          return fail(2, "unsupported",
                      "torchscript-archive (torch::jit::load compiles the archive's code: the libtorch-jit "
                      "reader reads these, trusted files only)");
      }
      out = describe(torch::jit::pickle_load(data), "pt-zip");
    }
    std::cout << out << "\n";
    return 0;
  } catch (const Declined& e) {
    return fail(2, "unsupported", e.what());
  } catch (const c10::Error& e) {
    return fail(1, "error", e.what_without_backtrace());
  } catch (const std::exception& e) {
    return fail(1, "error", e.what());
  }
}
