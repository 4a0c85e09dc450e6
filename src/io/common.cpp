// Shared checkpoint helpers: strict JSON parsing, atomic writes, SHA-256.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <set>
#include <vector>

#include "core/sha256.h"
#include "io/io_internal.h"
#include "spiraltorch/ops.h"

#ifndef SPIRALTORCH_VERSION
#define SPIRALTORCH_VERSION "unknown"
#endif

namespace st::io {

const char* version_string() { return SPIRALTORCH_VERSION; }

namespace detail {

namespace {

// Rejects documents nested deeper than `limit` before the parser sees them, so a
// hostile "[[[[..." cannot make the parser's stack grow with the file size.
bool depth_ok(const char* b, const char* e, int limit) {
  int depth = 0;
  bool in_string = false;
  for (const char* p = b; p < e; ++p) {
    const char c = *p;
    if (in_string) {
      if (c == '\\') {
        ++p;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

}  // namespace

json parse_json(const char* begin, const char* end, const std::string& what, const std::string& path,
                uint64_t max_values) {
  if (!depth_ok(begin, end, kMaxJsonDepth)) {
    fail(what, path, "invalid JSON: nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  std::vector<std::set<std::string>> keys;
  std::string duplicate;
  bool has_duplicate = false;
  uint64_t values = 0;
  json::parser_callback_t cb = [&](int, json::parse_event_t ev, json& parsed) -> bool {
    // The parsed document takes ~10x the text's memory: stop counting past the limit instead
    // of materialising a hostile array of millions of numbers.
    if ((ev == json::parse_event_t::value || ev == json::parse_event_t::object_start ||
         ev == json::parse_event_t::array_start) &&
        ++values > max_values) {
      fail(what, path,
           "JSON document holds more than " + std::to_string(max_values) + " values (the limit for this file)");
    }
    switch (ev) {
      case json::parse_event_t::object_start:
        keys.emplace_back();
        break;
      case json::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        break;
      case json::parse_event_t::key:
        if (!keys.empty() && parsed.is_string() && !keys.back().insert(parsed.get_ref<const std::string&>()).second &&
            !has_duplicate) {
          has_duplicate = true;
          duplicate = parsed.get_ref<const std::string&>();
        }
        break;
      default:
        break;
    }
    return true;
  };
  json j;
  try {
    j = json::parse(begin, end, cb, /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const json::exception& e) {
    std::string msg = e.what();
    // "[json.exception.parse_error.101] parse error at ..." -> "parse error at ..."
    if (const auto pos = msg.find("] "); pos != std::string::npos) msg = msg.substr(pos + 2);
    fail(what, path, "invalid JSON: " + msg);
  }
  if (has_duplicate) fail(what, path, "invalid JSON: duplicate key '" + duplicate + "'");
  return j;
}

std::string printable(const std::string& s) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (len > 1 && i + len <= s.size() && valid_utf8(std::string_view(s).substr(i, len))) {
      out.append(s, i, len);
      i += len;
    } else if (len == 1 && c >= 0x20 && c != 0x7f) {
      out += static_cast<char>(c);
      ++i;
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
      ++i;
    }
  }
  return out;
}

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (int k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

Tensor bytes_view(const Tensor& t, const std::string& what, const std::string& path, const std::string& name) {
  if (!t.defined()) fail(what, path, "tensor '" + name + "' is undefined");
  if (t.device().type != DeviceType::CPU) {
    fail(what, path, "tensor '" + name + "' is on " + t.device().str() + "; move it to the CPU before saving");
  }
  return t.detach().contiguous();
}

Tensor new_tensor(const Shape& shape, Dtype dtype) { return Tensor::empty(shape, dtype); }

void check_bool_bytes(const uint8_t* data, size_t n, const std::string& what, const std::string& path,
                      const std::string& name) {
  for (size_t i = 0; i < n; ++i) {
    if (data[i] > 1) {
      fail(what, path,
           "bool tensor '" + name + "' holds the byte value " + std::to_string(data[i]) + " at element " +
               std::to_string(i) + " (only 0 and 1 are booleans)");
    }
  }
}

bool checked_nbytes(const Shape& shape, Dtype dtype, uint64_t& nbytes) {
  // The same rule as checked_numel (which building the tensor applies): the product of the
  // non-zero dims, in bytes, must fit in int64 even when a zero dim makes the tensor empty.
  uint64_t n = 1;
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d == 0) {
      empty = true;
    } else if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) {
      return false;
    }
  }
  if (__builtin_mul_overflow(n, static_cast<uint64_t>(dtype_size(dtype)), &n)) return false;
  if (n > static_cast<uint64_t>(INT64_MAX)) return false;
  nbytes = empty ? 0 : n;
  return true;
}

int open_regular_file(const std::string& path, const std::string& what, uint64_t& size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(what, path, std::string("cannot open: ") + std::strerror(errno));
  struct stat sb{};
  if (::fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    ::close(fd);
    fail(what, path, "not a regular file");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  size = static_cast<uint64_t>(sb.st_size);
  return fd;
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Files

std::string read_file(const std::string& path, const std::string& what) {
  return detail::read_file_capped(path, what, UINT64_MAX);
}

std::string detail::read_file_capped(const std::string& path, const std::string& what, uint64_t max_bytes) {
  uint64_t size = 0;
  const int fd = detail::open_regular_file(path, what, size);
  if (size > max_bytes) {
    ::close(fd);
    detail::fail(what, path,
                 "file has " + std::to_string(size) + " bytes, more than the limit of " + std::to_string(max_bytes) +
                     " for this kind of file");
  }
  std::string out;
  out.resize(static_cast<size_t>(size));
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t r = ::read(fd, out.data() + done, out.size() - done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      const int err = errno;
      ::close(fd);
      detail::fail(what, path,
                   r == 0 ? "file shrank while being read" : std::string("read failed: ") + std::strerror(err));
    }
    done += static_cast<size_t>(r);
  }
  ::close(fd);
  return out;
}

namespace detail {

namespace {

// This machine and PID namespace, in 16 hex digits: a PID in a temporary's name means
// something only where it was written (another host or container sharing the directory has
// its own PIDs), so a temporary is ours to judge only when this tag matches.
std::string compute_host_tag() {
  auto first_line = [](const char* file) {
    std::string s;
    if (const int fd = ::open(file, O_RDONLY | O_CLOEXEC); fd >= 0) {
      char buf[256];
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) s.assign(buf, static_cast<size_t>(n));
      ::close(fd);
    }
    return s.substr(0, s.find('\n'));
  };
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  char ns[128] = {0};
  if (::readlink("/proc/self/ns/pid", ns, sizeof ns - 1) < 0) ns[0] = 0;
  const std::string who = std::string(host) + "\n" + first_line("/proc/sys/kernel/random/boot_id") + "\n" + ns;
  return sha256_hex(who.data(), who.size()).substr(0, 16);
}

bool process_alive(pid_t pid) { return pid == ::getpid() || ::kill(pid, 0) == 0 || errno == EPERM; }

}  // namespace

std::filesystem::path save_target(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_symlink(path, ec)) return path;
  // A save through a link replaces the file it points to and keeps the link, as writing
  // through it with open() would (torch.save does); a dangling link names the file to create.
  const fs::path resolved = fs::weakly_canonical(path, ec);
  return ec ? path : resolved;
}

std::filesystem::path temporary_for(const std::filesystem::path& target) {
  static std::atomic<uint64_t> counter{0};
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  return dir / ("." + target.filename().string() + ".tmp-" + temporary_host_tag() + "-" + std::to_string(::getpid()) +
                "-" + std::to_string(counter.fetch_add(1)));
}

std::vector<Temporary> temporaries_of(const std::filesystem::path& target) {
  namespace fs = std::filesystem;
  std::vector<Temporary> out;
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefix = target.filename().string() + ".tmp-";
  const auto now = fs::file_time_type::clock::now();
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const size_t dots = name.find_first_not_of('.');
    if (dots == 0 || dots == std::string::npos || name.compare(dots, prefix.size(), prefix) != 0) continue;
    // .<name>.tmp-<host tag>-<pid>-<n>; names without a host tag (older versions) are foreign.
    const std::string rest = name.substr(dots + prefix.size());
    bool ours = false;
    pid_t pid = 0;
    if (rest.size() > 17 && rest.compare(0, 16, temporary_host_tag()) == 0 && rest[16] == '-') {
      char* endp = nullptr;
      const long v = std::strtol(rest.c_str() + 17, &endp, 10);
      ours = endp != rest.c_str() + 17 && *endp == '-' && v > 0;
      pid = static_cast<pid_t>(v);
    }
    std::error_code tec;
    const auto written = fs::last_write_time(it->path(), tec);
    const bool old = !tec && now - written > kForeignTemporaryAge;
    out.push_back({it->path(), ours && !process_alive(pid) ? true : old, tec ? now : written});
  }
  return out;
}

void fsync_directory(const std::filesystem::path& dir) {
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void keep_mode(const std::filesystem::path& replaced, int fd) {
  struct stat sb{};
  if (::stat(replaced.c_str(), &sb) == 0 && S_ISREG(sb.st_mode)) ::fchmod(fd, sb.st_mode & 07777);
}

}  // namespace detail

const std::string& temporary_host_tag() {
  static const std::string tag = detail::compute_host_tag();
  return tag;
}

void write_file_atomic(const std::string& path, const std::string& what,
                       const std::function<void(const ByteSink&)>& body) {
  namespace fs = std::filesystem;
  if (fs::path(path).filename().empty()) detail::fail(what, path, "not a file path");
  const fs::path target = detail::save_target(fs::path(path));
  std::error_code ec;
  if (fs::is_directory(target, ec)) detail::fail(what, path, "is a directory");
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const fs::path tmp = detail::temporary_for(target);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) {
    detail::fail(what, path, "cannot create a temporary file in '" + dir.string() + "': " + std::strerror(errno));
  }
  detail::keep_mode(target, fd);  // replacing a file keeps its permissions
  bool open = true;
  try {
    const ByteSink sink = [&](const void* data, size_t n) {
      const char* p = static_cast<const char*>(data);
      while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) detail::fail(what, path, std::string("write failed: ") + std::strerror(errno));
        p += w;
        n -= static_cast<size_t>(w);
      }
    };
    body(sink);
    if (::fsync(fd) != 0) detail::fail(what, path, std::string("fsync failed: ") + std::strerror(errno));
    open = false;
    if (::close(fd) != 0) detail::fail(what, path, std::string("close failed: ") + std::strerror(errno));
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
      detail::fail(what, path, std::string("cannot replace the file: ") + std::strerror(errno));
    }
  } catch (...) {
    if (open) ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  detail::fsync_directory(dir);
}

using st::Sha256;

std::string sha256_hex(const void* data, size_t size) {
  Sha256 s;
  s.update(data, size);
  return s.hex();
}

std::string sha256_file(const std::string& path) {
  uint64_t size = 0;
  const int fd = detail::open_regular_file(path, "manifest", size);
  Sha256 s;
  std::vector<uint8_t> buf(1 << 20);
  while (true) {
    const ssize_t r = ::read(fd, buf.data(), buf.size());
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      const int err = errno;
      ::close(fd);
      detail::fail("manifest", path, std::string("read failed: ") + std::strerror(err));
    }
    if (r == 0) break;
    s.update(buf.data(), static_cast<size_t>(r));
  }
  ::close(fd);
  return s.hex();
}

}  // namespace st::io
