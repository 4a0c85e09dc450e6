#include "spiraltorch/runtime/spiralk.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>

namespace st::spiralk {

SpiralKError::SpiralKError(int line, int column, const std::string& detail)
    : ValueError("spiralk: line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + detail),
      line_(line),
      column_(column),
      detail_(detail) {}

namespace {

// ---------------------------------------------------------------- fields

struct FieldAlias {
  const char* alias;
  const char* canonical;
};
constexpr FieldAlias kFields[] = {
    {"workgroup", "workgroup"},
    {"wg", "workgroup"},
    {"lanes", "lanes"},
    {"kl", "lanes"},
    {"channel_stride", "channel_stride"},
    {"ch", "channel_stride"},
    {"tile", "tile"},
    {"compaction_tile", "compaction_tile"},
    {"ctile", "compaction_tile"},
    {"two_stage", "two_stage"},
    {"u2", "two_stage"},
    {"use_2ce", "two_stage"},
    {"merge_kind", "merge_kind"},
    {"merge_detail", "merge_detail"},
    {"algo", "algo"},
    {"midk", "midk"},
    {"bottomk", "bottomk"},
    {"fft_tile", "fft_tile"},
    {"tile_cols", "fft_tile"},
    {"fft_radix", "fft_radix"},
    {"radix", "fft_radix"},
    {"fft_segments", "fft_segments"},
    {"segments", "fft_segments"},
};

// ---------------------------------------------------------------- lexer

enum class Tok { Ident, Number, String, Punct, End };

struct Token {
  Tok kind;
  std::string text;
  double number = 0.0;
  int line = 1, column = 1;
};

std::string describe(const Token& t) {
  switch (t.kind) {
    case Tok::End:
      return "the end of the program";
    case Tok::String:
      return "the string \"" + t.text + "\"";
    default:
      return "'" + t.text + "'";
  }
}

std::vector<Token> lex(std::string_view src) {
  std::vector<Token> out;
  size_t i = 0;
  int line = 1, col = 1;
  auto advance = [&](size_t n) {
    for (size_t j = 0; j < n && i < src.size(); ++j, ++i) {
      if (src[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
  };
  while (i < src.size()) {
    const char c = src[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      advance(1);
      continue;
    }
    if (c == '#') {
      if (i + 1 < src.size() && src[i + 1] == '=') {  // #= block comment =#
        const int l0 = line, c0 = col;
        const size_t end = src.find("=#", i + 2);
        if (end == std::string_view::npos) throw SpiralKError(l0, c0, "unterminated comment '#=' (missing '=#')");
        advance(end + 2 - i);
      } else {
        while (i < src.size() && src[i] != '\n') advance(1);
      }
      continue;
    }
    Token t{Tok::Punct, "", 0.0, line, col};
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < src.size() && (std::isalnum(static_cast<unsigned char>(src[j])) || src[j] == '_')) ++j;
      t.kind = Tok::Ident;
      t.text = std::string(src.substr(i, j - i));
      advance(j - i);
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < src.size() && std::isdigit(static_cast<unsigned char>(src[i + 1])))) {
      size_t j = i;
      while (j < src.size() && (std::isdigit(static_cast<unsigned char>(src[j])) || src[j] == '.')) ++j;
      if (j < src.size() && (src[j] == 'e' || src[j] == 'E')) {
        size_t e = j + 1;
        if (e < src.size() && (src[e] == '+' || src[e] == '-')) ++e;
        if (e < src.size() && std::isdigit(static_cast<unsigned char>(src[e]))) {
          j = e;
          while (j < src.size() && std::isdigit(static_cast<unsigned char>(src[j]))) ++j;
        }
      }
      t.kind = Tok::Number;
      t.text = std::string(src.substr(i, j - i));
      char* end = nullptr;
      t.number = std::strtod(t.text.c_str(), &end);
      if (end != t.text.c_str() + t.text.size()) throw SpiralKError(line, col, "malformed number '" + t.text + "'");
      advance(j - i);
    } else if (c == '"') {
      size_t j = i + 1;
      while (j < src.size() && src[j] != '"' && src[j] != '\n') ++j;
      if (j >= src.size() || src[j] != '"') throw SpiralKError(line, col, "unterminated string");
      t.kind = Tok::String;
      t.text = std::string(src.substr(i + 1, j - i - 1));
      advance(j + 1 - i);
    } else {
      static const char* two[] = {"==", "!=", "<=", ">=", "&&", "||"};
      std::string p(1, c);
      for (const char* op : two) {
        if (src.substr(i, 2) == op) p = op;
      }
      if (p.size() == 1 && std::string_view(":;,(){}.<>+-*/%!=").find(c) == std::string_view::npos) {
        throw SpiralKError(line, col, std::string("unexpected character '") + c + "'");
      }
      t.text = p;
      advance(p.size());
    }
    out.push_back(std::move(t));
  }
  out.push_back({Tok::End, "", 0.0, line, col});
  return out;
}

}  // namespace

// ---------------------------------------------------------------- syntax tree

enum class Kind { Number, Bool, String, Var, Unary, Binary, Call, Assign, Soft, Let, If, Block, Unison };

struct Node {
  Kind kind;
  std::string text;  // operator, name, field or string value
  double number = 0.0;
  int line = 1, column = 1;
  std::vector<std::shared_ptr<const Node>> kids;
};

namespace {

using NodePtr = std::shared_ptr<const Node>;

NodePtr make(Kind kind, const Token& at, std::string text = {}, std::vector<NodePtr> kids = {}) {
  auto n = std::make_shared<Node>();
  n->kind = kind;
  n->text = std::move(text);
  n->line = at.line;
  n->column = at.column;
  n->kids = std::move(kids);
  return n;
}

// A number or boolean literal (a boolean holds 1 or 0).
NodePtr literal(Kind kind, const Token& at, double value) {
  auto n = std::make_shared<Node>();
  n->kind = kind;
  n->number = value;
  n->line = at.line;
  n->column = at.column;
  return n;
}

const char* kRankKinds[] = {"topk", "midk", "bottomk"};
const char* kMergeKinds[] = {"bitonic", "shared", "warp"};
const char* kMergeDetails[] = {"auto", "heap", "kway", "bitonic", "warp_heap", "warp_bitonic"};

class Parser {
 public:
  explicit Parser(std::string_view src) : toks_(lex(src)) {}

  NodePtr program() {
    std::vector<NodePtr> stmts;
    while (peek().kind != Tok::End) stmts.push_back(statement());
    return make(Kind::Block, toks_.front(), "", std::move(stmts));
  }

 private:
  static constexpr int kMaxDepth = 200;  // hostile nesting must not overflow the stack

  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser) : p(parser) {
      if (++p.depth_ > kMaxDepth) throw SpiralKError(p.peek().line, p.peek().column, "nesting is too deep");
    }
    ~DepthGuard() { --p.depth_; }
  };

  const Token& peek(size_t ahead = 0) const { return toks_[std::min(pos_ + ahead, toks_.size() - 1)]; }
  const Token& next() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool is(const char* punct) const { return peek().kind == Tok::Punct && peek().text == punct; }
  bool is_word(const char* word) const { return peek().kind == Tok::Ident && peek().text == word; }
  [[noreturn]] void fail(const std::string& what) const {
    throw SpiralKError(peek().line, peek().column, what + ", got " + describe(peek()));
  }
  const Token& expect(const char* punct, const std::string& context) {
    if (!is(punct)) fail(std::string("expected '") + punct + "' " + context);
    return next();
  }
  const Token& expect_ident(const std::string& context) {
    if (peek().kind != Tok::Ident) fail("expected " + context);
    return next();
  }

  NodePtr statement() {
    const DepthGuard guard(*this);
    if (is_word("if")) return if_statement();
    if (is_word("let")) {
      const Token& kw = next();
      const Token& name = expect_ident("a variable name after 'let'");
      expect("=", "after the name of 'let " + name.text + "'");
      NodePtr value = expr();
      expect(";", "after the value of 'let " + name.text + "'");
      return make(Kind::Let, kw, name.text, {value});
    }
    if (is_word("soft") && peek(1).kind == Tok::Punct && peek(1).text == "(") return soft_rule();
    if (is_word("unison") && peek(1).kind == Tok::Ident) return unison_block();
    if (peek().kind != Tok::Ident) fail("expected a statement (a field assignment, 'soft', 'let', 'if' or 'unison')");
    const Token& field = next();
    const auto canonical = canonical_field(field.text);
    if (!canonical) {
      std::string known;
      for (const std::string& f : hard_fields()) known += (known.empty() ? "" : ", ") + f;
      throw SpiralKError(field.line, field.column, "unknown field '" + field.text + "' (fields: " + known + ")");
    }
    expect(":", "after the field '" + field.text + "'");
    NodePtr value = expr();
    expect(";", "after the value of '" + field.text + "'");
    return make(Kind::Assign, field, *canonical, {value});
  }

  NodePtr block(const std::string& context) {
    const Token& open = expect("{", context);
    std::vector<NodePtr> stmts;
    while (!is("}")) {
      if (peek().kind == Tok::End) fail("expected '}' to close the block opened at line " + std::to_string(open.line));
      stmts.push_back(statement());
    }
    next();
    return make(Kind::Block, open, "", std::move(stmts));
  }

  // An if / else if / else chain is one node, kids = {cond, block, cond, block, ..., else block}, parsed
  // in a loop: a chain of any length neither recurses here nor builds a deep tree to evaluate or free.
  NodePtr if_statement() {
    const Token& kw = next();
    std::vector<NodePtr> kids;
    for (;;) {
      kids.push_back(expr());
      kids.push_back(block("after the condition of 'if'"));
      if (!is_word("else")) {
        kids.push_back(make(Kind::Block, kw));
        break;
      }
      next();
      if (!is_word("if")) {
        kids.push_back(block("after 'else'"));
        break;
      }
      next();
    }
    return make(Kind::If, kw, "", std::move(kids));
  }

  NodePtr soft_rule() {
    const Token& kw = next();
    expect("(", "after 'soft'");
    const Token& first = expect_ident("a field name as the first argument of 'soft'");
    std::string field = first.text;
    while (is(".")) {
      next();
      field += "." + expect_ident("a name after '.' in the field of 'soft'").text;
    }
    expect(",", "after the field of 'soft'");
    NodePtr value = expr();
    expect(",", "after the value of 'soft'");
    NodePtr weight = expr();
    expect(",", "after the weight of 'soft'");
    NodePtr cond = expr();
    expect(")", "after the condition of 'soft'");
    expect(";", "after 'soft(...)'");
    return make(Kind::Soft, kw, field, {value, weight, cond});
  }

  // unison <kind> { workgroup 32 lanes 8 merge warp warp_heap two_stage false ... }
  NodePtr unison_block() {
    const Token& kw = next();
    const Token& kind = next();
    if (std::find_if(std::begin(kRankKinds), std::end(kRankKinds), [&](const char* k) { return kind.text == k; }) ==
        std::end(kRankKinds)) {
      throw SpiralKError(kind.line, kind.column,
                         "expected a rank kind (topk, midk or bottomk) after 'unison', got '" + kind.text + "'");
    }
    const Token& open = expect("{", "after 'unison " + kind.text + "'");
    std::vector<NodePtr> settings;
    while (!is("}")) {
      if (peek().kind == Tok::End)
        fail("expected '}' to close the unison block opened at line " + std::to_string(open.line));
      const Token& key = expect_ident("a unison setting (workgroup, lanes, merge, tile, ...) or '}'");
      if (key.text == "merge") {
        const Token& strategy = expect_ident("a merge strategy (bitonic, shared or warp) after 'merge'");
        const int mk = index_of(kMergeKinds, strategy, "merge strategy");
        const Token& detail = expect_ident("a merge detail (auto, heap, kway, bitonic, warp_heap, warp_bitonic)");
        const int md = index_of(kMergeDetails, detail, "merge detail");
        settings.push_back(number_assign("merge_kind", strategy, mk));
        settings.push_back(number_assign("merge_detail", detail, md));
        continue;
      }
      static const char* keys[] = {"workgroup", "lanes",    "channel_stride", "tile",        "compaction_tile",
                                   "two_stage", "fft_tile", "fft_radix",      "fft_segments"};
      if (std::find_if(std::begin(keys), std::end(keys), [&](const char* k) { return key.text == k; }) ==
          std::end(keys)) {
        throw SpiralKError(key.line, key.column, "unknown unison setting '" + key.text + "'");
      }
      const Token& v = peek();
      if (key.text == "two_stage") {
        if (!(v.kind == Tok::Ident && (v.text == "true" || v.text == "false")))
          fail("expected true or false after 'two_stage'");
        next();
        settings.push_back(
            make(Kind::Assign, key, "two_stage", {literal(Kind::Bool, v, v.text == "true" ? 1.0 : 0.0)}));
      } else {
        if (v.kind != Tok::Number) fail("expected a number after '" + key.text + "'");
        next();
        settings.push_back(number_assign(key.text, v, v.number));
      }
    }
    next();
    return make(Kind::Unison, kw, kind.text, std::move(settings));
  }

  template <size_t N>
  static int index_of(const char* const (&names)[N], const Token& t, const char* what) {
    for (size_t i = 0; i < N; ++i) {
      if (t.text == names[i]) return static_cast<int>(i);
    }
    std::string known;
    for (const char* n : names) known += (known.empty() ? "" : ", ") + std::string(n);
    throw SpiralKError(t.line, t.column, std::string("unknown ") + what + " '" + t.text + "' (one of " + known + ")");
  }

  static NodePtr number_assign(const std::string& field, const Token& at, double value) {
    return make(Kind::Assign, at, field, {literal(Kind::Number, at, value)});
  }

  // ---- expressions (lowest precedence first)

  NodePtr expr() {
    const DepthGuard guard(*this);
    return binary_level(0);
  }

  NodePtr binary_level(int level) {
    static const std::vector<std::vector<std::string>> ops = {
        {"||"}, {"&&"}, {"==", "!=", "<", "<=", ">", ">="}, {"+", "-"}, {"*", "/", "%"}};
    if (level == static_cast<int>(ops.size())) return unary();
    NodePtr lhs = binary_level(level + 1);
    const bool comparison = level == 2;  // comparisons do not chain: `a < b < c` is an error
    while (peek().kind == Tok::Punct &&
           std::find(ops[level].begin(), ops[level].end(), peek().text) != ops[level].end()) {
      const Token& op = next();
      NodePtr rhs = binary_level(level + 1);
      lhs = make(Kind::Binary, op, op.text, {lhs, rhs});
      if (comparison) break;
    }
    return lhs;
  }

  NodePtr unary() {
    const DepthGuard guard(*this);
    if (is("-") || is("!")) {
      const Token& op = next();
      return make(Kind::Unary, op, op.text, {unary()});
    }
    return primary();
  }

  NodePtr primary() {
    const Token& t = peek();
    if (t.kind == Tok::Number) {
      next();
      return literal(Kind::Number, t, t.number);
    }
    if (t.kind == Tok::String) {
      next();
      return make(Kind::String, t, t.text);
    }
    if (is("(")) {
      next();
      NodePtr inner = expr();
      expect(")", "to close '('");
      return inner;
    }
    if (t.kind == Tok::Ident) {
      next();
      if (t.text == "true" || t.text == "false") {
        return literal(Kind::Bool, t, t.text == "true" ? 1.0 : 0.0);
      }
      if (is("(")) {
        next();
        std::vector<NodePtr> args;
        if (!is(")")) {
          args.push_back(expr());
          while (is(",")) {
            next();
            args.push_back(expr());
          }
        }
        expect(")", "after the arguments of '" + t.text + "'");
        return make(Kind::Call, t, t.text, std::move(args));
      }
      return make(Kind::Var, t, t.text);
    }
    fail("expected a value (a number, true, false, a string, a name, a call or '(')");
  }

  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
};

// ---------------------------------------------------------------- evaluation

const char* type_name(const Value& v) {
  return std::holds_alternative<double>(v) ? "a number" : std::holds_alternative<bool>(v) ? "a boolean" : "a string";
}

class Evaluator {
 public:
  explicit Evaluator(const Variables& vars) : base_(vars) {}

  void run(const Node& n, Result& out) {
    const DepthGuard guard(*this, n);
    switch (n.kind) {
      case Kind::Block: {
        scopes_.emplace_back();
        for (const auto& s : n.kids) run(*s, out);
        scopes_.pop_back();
        return;
      }
      case Kind::Assign: {
        const Value v = eval(*n.kids[0]);
        auto it = std::find_if(out.hard.begin(), out.hard.end(), [&](const auto& kv) { return kv.first == n.text; });
        if (it == out.hard.end()) {
          out.hard.emplace_back(n.text, v);
        } else {
          it->second = v;
        }
        return;
      }
      case Kind::Soft: {
        const Value value = eval(*n.kids[0]);
        const double weight = number(*n.kids[1], "the weight of 'soft'");
        if (!(weight >= 0.0 && weight <= 1.0)) {
          throw SpiralKError(n.kids[1]->line, n.kids[1]->column,
                             "the weight of 'soft' must be in [0, 1], got " + value_str(weight));
        }
        if (boolean(*n.kids[2], "the condition of 'soft'")) out.soft.push_back({n.text, value, weight});
        return;
      }
      case Kind::Let: {
        scopes_.back()[n.text] = eval(*n.kids[0]);
        return;
      }
      case Kind::If: {
        const size_t last = n.kids.size() - 1;
        for (size_t i = 0; i < last; i += 2) {
          if (boolean(*n.kids[i], "the condition of 'if'")) return run(*n.kids[i + 1], out);
        }
        return run(*n.kids[last], out);
      }
      case Kind::Unison: {
        if (out.unison_kind && *out.unison_kind != n.text) {
          throw SpiralKError(n.line, n.column,
                             "a second unison block for '" + n.text + "' after one for '" + *out.unison_kind + "'");
        }
        out.unison_kind = n.text;
        for (const auto& s : n.kids) run(*s, out);
        return;
      }
      default:
        throw SpiralKError(n.line, n.column, "internal: not a statement");
    }
  }

 private:
  // The parser bounds nesting already; this bound keeps a tree built any other way from overflowing the stack.
  static constexpr int kMaxDepth = 1000;
  struct DepthGuard {
    Evaluator& e;
    DepthGuard(Evaluator& evaluator, const Node& n) : e(evaluator) {
      if (++e.depth_ > kMaxDepth) {
        --e.depth_;
        throw SpiralKError(n.line, n.column, "nesting is too deep to evaluate");
      }
    }
    ~DepthGuard() { --e.depth_; }
  };
  int depth_ = 0;

  double number(const Node& n, const std::string& what) {
    const Value v = eval(n);
    if (!std::holds_alternative<double>(v)) {
      throw SpiralKError(n.line, n.column, what + " must be a number, got " + type_name(v));
    }
    return std::get<double>(v);
  }
  bool boolean(const Node& n, const std::string& what) {
    const Value v = eval(n);
    if (!std::holds_alternative<bool>(v)) {
      throw SpiralKError(n.line, n.column, what + " must be a boolean, got " + type_name(v));
    }
    return std::get<bool>(v);
  }

  Value lookup(const Node& n) const {
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
      if (const auto it = s->find(n.text); it != s->end()) return it->second;
    }
    if (const auto it = base_.find(n.text); it != base_.end()) return it->second;
    std::string known;
    for (const auto& [k, v] : base_) known += (known.empty() ? "" : ", ") + k;
    throw SpiralKError(n.line, n.column,
                       "unknown variable '" + n.text + "'" + (known.empty() ? "" : " (in scope: " + known + ")"));
  }

  Value eval(const Node& n) {
    const DepthGuard guard(*this, n);
    switch (n.kind) {
      case Kind::Number:
        return n.number;
      case Kind::Bool:
        return n.number != 0.0;
      case Kind::String:
        return n.text;
      case Kind::Var:
        return lookup(n);
      case Kind::Unary: {
        if (n.text == "-") return -number(*n.kids[0], "the operand of '-'");
        return !boolean(*n.kids[0], "the operand of '!'");
      }
      case Kind::Binary:
        return binary(n);
      case Kind::Call:
        return call(n);
      default:
        throw SpiralKError(n.line, n.column, "internal: not an expression");
    }
  }

  Value binary(const Node& n) {
    const std::string& op = n.text;
    if (op == "&&" || op == "||") {  // short-circuit
      const bool lhs = boolean(*n.kids[0], "the left side of '" + op + "'");
      if (op == "&&" ? !lhs : lhs) return lhs;
      return boolean(*n.kids[1], "the right side of '" + op + "'");
    }
    const Value a = eval(*n.kids[0]), b = eval(*n.kids[1]);
    if (op == "==" || op == "!=") {
      if (a.index() != b.index()) {
        throw SpiralKError(n.line, n.column, "'" + op + "' compares " + type_name(a) + " with " + type_name(b));
      }
      return (a == b) == (op == "==");
    }
    if (!std::holds_alternative<double>(a) || !std::holds_alternative<double>(b)) {
      throw SpiralKError(n.line, n.column, "'" + op + "' needs numbers, got " + type_name(a) + " and " + type_name(b));
    }
    const double x = std::get<double>(a), y = std::get<double>(b);
    if (op == "<") return x < y;
    if (op == "<=") return x <= y;
    if (op == ">") return x > y;
    if (op == ">=") return x >= y;
    if (op == "+") return x + y;
    if (op == "-") return x - y;
    if (op == "*") return x * y;
    if (y == 0.0) throw SpiralKError(n.line, n.column, "division by zero in '" + op + "'");
    if (op == "/") return x / y;
    return std::fmod(x, y);
  }

  Value call(const Node& n) {
    const std::string& f = n.text;
    const size_t argc = n.kids.size();
    auto arity = [&](size_t want) {
      if (argc != want) {
        throw SpiralKError(n.line, n.column,
                           "'" + f + "' takes " + std::to_string(want) + " argument" + (want == 1 ? "" : "s") +
                               ", got " + std::to_string(argc));
      }
    };
    auto arg = [&](size_t i) { return number(*n.kids[i], "argument " + std::to_string(i + 1) + " of '" + f + "'"); };
    if (f == "sel") {
      arity(3);
      return boolean(*n.kids[0], "the condition of 'sel'") ? eval(*n.kids[1]) : eval(*n.kids[2]);
    }
    if (f == "min" || f == "max") {
      if (argc < 1) throw SpiralKError(n.line, n.column, "'" + f + "' needs at least one argument");
      double r = arg(0);
      for (size_t i = 1; i < argc; ++i) r = f == "min" ? std::min(r, arg(i)) : std::max(r, arg(i));
      return r;
    }
    if (f == "clamp") {
      arity(3);
      const double x = arg(0), lo = arg(1), hi = arg(2);
      if (lo > hi)
        throw SpiralKError(n.line, n.column, "'clamp' bounds are reversed: " + value_str(lo) + " > " + value_str(hi));
      return std::clamp(x, lo, hi);
    }
    if (f == "pow") {
      arity(2);
      return std::pow(arg(0), arg(1));
    }
    static const std::map<std::string, double (*)(double), std::less<>> unary = {
        {"abs", [](double x) { return std::fabs(x); }},  {"floor", [](double x) { return std::floor(x); }},
        {"ceil", [](double x) { return std::ceil(x); }}, {"round", [](double x) { return std::round(x); }},
        {"sqrt", [](double x) { return std::sqrt(x); }}, {"log2", [](double x) { return std::log2(x); }},
    };
    if (const auto it = unary.find(f); it != unary.end()) {
      arity(1);
      const double x = arg(0);
      if ((f == "sqrt" && x < 0) || (f == "log2" && x <= 0)) {
        throw SpiralKError(n.line, n.column, "'" + f + "' is undefined at " + value_str(x));
      }
      return it->second(x);
    }
    throw SpiralKError(
        n.line, n.column,
        "unknown function '" + f + "' (builtins: abs, ceil, clamp, floor, log2, max, min, pow, round, sel, sqrt)");
  }

  const Variables& base_;
  std::vector<std::map<std::string, Value, std::less<>>> scopes_;
};

}  // namespace

Program Program::parse(std::string_view source) {
  Program p;
  p.source_ = std::string(source);
  p.root_ = Parser(source).program();
  return p;
}

Result Program::eval(const Variables& variables) const {
  Result r;
  Evaluator(variables).run(*root_, r);
  return r;
}

const Value* Result::find(std::string_view field) const {
  for (const auto& [k, v] : hard) {
    if (k == field) return &v;
  }
  return nullptr;
}

std::optional<std::string> canonical_field(std::string_view name) {
  for (const FieldAlias& f : kFields) {
    if (name == f.alias) return std::string(f.canonical);
  }
  return std::nullopt;
}

const std::vector<std::string>& hard_fields() {
  static const std::vector<std::string> fields = [] {
    std::vector<std::string> out;
    for (const FieldAlias& f : kFields) {
      if (std::find(out.begin(), out.end(), f.canonical) == out.end()) out.emplace_back(f.canonical);
    }
    return out;
  }();
  return fields;
}

std::string value_str(const Value& v) {
  if (const bool* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const std::string* s = std::get_if<std::string>(&v)) return "\"" + *s + "\"";
  const double x = std::get<double>(v);
  if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 1e15) return std::to_string(static_cast<int64_t>(x));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

}  // namespace st::spiralk
