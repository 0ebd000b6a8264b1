#include "tests/cc/filecheck.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace exla_test {
namespace {

enum class Kind { kCheck, kNext, kSame, kNot, kDag };

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kCheck: return "CHECK";
    case Kind::kNext: return "CHECK-NEXT";
    case Kind::kSame: return "CHECK-SAME";
    case Kind::kNot: return "CHECK-NOT";
    case Kind::kDag: return "CHECK-DAG";
  }
  return "?";
}

struct Directive {
  Kind kind;
  std::string pattern;  // as written, trimmed
  int line;             // 1-based line in the checks text
};

// A failure to report: thrown inside this file only, turned into an
// AssertionResult by FileCheck().
struct CheckError {
  std::string message;
};

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string Trim(const std::string& s) {
  size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  size_t end = s.find_last_not_of(" \t\r");
  return s.substr(begin, end - begin + 1);
}

std::string DirectiveHeader(const Directive& d) {
  return "checks:" + std::to_string(d.line) + ": " + KindName(d.kind) + ": " + d.pattern;
}

// Splits `checks` into directives. The prefix must start a word ("XCHECK:" is
// not a directive); "CHECK-WORD:" with an unknown WORD is an error, because a
// misspelt directive would otherwise never be checked.
std::vector<Directive> ParseDirectives(const std::string& checks) {
  std::vector<Directive> directives;
  std::istringstream in(checks);
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    size_t at = 0;
    while ((at = text.find("CHECK", at)) != std::string::npos) {
      if (at > 0 && (IsWordChar(text[at - 1]) || text[at - 1] == '-')) {
        at += 5;
        continue;
      }
      size_t after = at + 5;
      std::string suffix;
      if (after < text.size() && text[after] == '-') {
        size_t end = after + 1;
        while (end < text.size() && IsWordChar(text[end])) ++end;
        suffix = text.substr(after + 1, end - after - 1);
        after = end;
      }
      if (after >= text.size() || text[after] != ':') {
        if (!suffix.empty() && after < text.size() && text[after] == ' ') {
          // "CHECK-NEXT :" is a typo the same way.
          throw CheckError{"checks:" + std::to_string(line) + ": error: malformed directive '" +
                           text.substr(at, after - at + 1) + "' (no space before ':')"};
        }
        at = after;
        continue;
      }
      Kind kind;
      if (suffix.empty()) {
        kind = Kind::kCheck;
      } else if (suffix == "NEXT") {
        kind = Kind::kNext;
      } else if (suffix == "SAME") {
        kind = Kind::kSame;
      } else if (suffix == "NOT") {
        kind = Kind::kNot;
      } else if (suffix == "DAG") {
        kind = Kind::kDag;
      } else {
        throw CheckError{"checks:" + std::to_string(line) + ": error: unknown directive 'CHECK-" +
                         suffix + ":' (known: CHECK, CHECK-NEXT, CHECK-SAME, CHECK-NOT, "
                         "CHECK-DAG)"};
      }
      Directive directive{kind, Trim(text.substr(after + 1)), line};
      if (directive.pattern.empty()) {
        throw CheckError{"checks:" + std::to_string(line) + ": error: " + KindName(kind) +
                         ": has an empty pattern"};
      }
      directives.push_back(directive);
      break;  // one directive per line
    }
  }
  if (directives.empty()) throw CheckError{"checks: error: no CHECK directive found"};
  if (directives[0].kind == Kind::kNext || directives[0].kind == Kind::kSame) {
    throw CheckError{DirectiveHeader(directives[0]) + "\nerror: " + KindName(directives[0].kind) +
                     " has no previous match to follow (the first directive must not be one)"};
  }
  return directives;
}

// Number of capturing groups a regex opens: '(' not escaped, not in a
// character class and not followed by '?'.
int CountGroups(const std::string& re) {
  int groups = 0;
  bool in_class = false;
  for (size_t i = 0; i < re.size(); ++i) {
    const char c = re[i];
    if (c == '\\') {
      ++i;
    } else if (in_class) {
      if (c == ']') in_class = false;
    } else if (c == '[') {
      in_class = true;
      if (i + 1 < re.size() && re[i + 1] == ']') ++i;  // "[]...]": ']' is literal
    } else if (c == '(' && (i + 1 >= re.size() || re[i + 1] != '?')) {
      ++groups;
    }
  }
  return groups;
}

std::string EscapeRegex(const std::string& literal) {
  static const std::string kSpecial = "\\^$.|?*+()[]{}/";
  std::string out;
  for (char c : literal) {
    if (kSpecial.find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

bool IsVariableName(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), IsWordChar);
}

// A pattern translated to one regex, for the variables bound so far.
struct CompiledPattern {
  std::regex regex;
  std::map<std::string, int> defines;  // variable -> capture group
  std::vector<std::string> uses;       // variables substituted from earlier directives
};

using Variables = std::map<std::string, std::string>;

CompiledPattern Compile(const Directive& d, const Variables& vars) {
  const std::string& p = d.pattern;
  std::string re;
  CompiledPattern out;
  int groups = 0;
  auto error = [&](const std::string& what) {
    return CheckError{DirectiveHeader(d) + "\nerror: " + what};
  };
  size_t i = 0;
  while (i < p.size()) {
    if (p.compare(i, 2, "{{") == 0) {
      size_t end = p.find("}}", i + 2);
      if (end == std::string::npos) throw error("'{{' without matching '}}'");
      // "{{[0-9]{2}}}": the regex ends at the last '}' of the run.
      while (end + 2 < p.size() && p[end + 2] == '}') ++end;
      const std::string body = p.substr(i + 2, end - i - 2);
      if (body.empty()) throw error("empty regex '{{}}'");
      re += "(?:" + body + ")";
      groups += CountGroups(body);
      i = end + 2;
    } else if (p.compare(i, 2, "[[") == 0) {
      // The variable's regex may hold brackets: end at the first "]]" outside them.
      size_t j = i + 2;
      int depth = 0;
      for (; j < p.size(); ++j) {
        if (p[j] == '\\') {
          ++j;
        } else if (p[j] == '[') {
          ++depth;
        } else if (p[j] == ']') {
          if (depth == 0 && j + 1 < p.size() && p[j + 1] == ']') break;
          if (depth > 0) --depth;
        }
      }
      if (j >= p.size()) throw error("'[[' without matching ']]'");
      const std::string body = p.substr(i + 2, j - i - 2);
      const size_t colon = body.find(':');
      const std::string name = body.substr(0, colon);
      if (!IsVariableName(name)) throw error("bad variable name '" + name + "'");
      if (colon != std::string::npos) {
        const std::string var_re = body.substr(colon + 1);
        if (var_re.empty()) throw error("variable '" + name + "' has an empty regex");
        out.defines[name] = ++groups;
        re += "(" + var_re + ")";
        groups += CountGroups(var_re);
      } else if (out.defines.count(name)) {
        re += "\\" + std::to_string(out.defines[name]);
      } else if (vars.count(name)) {
        re += EscapeRegex(vars.at(name));
        out.uses.push_back(name);
      } else {
        throw error("variable '" + name + "' is used but was never defined");
      }
      i = j + 2;
    } else if (p[i] == ' ' || p[i] == '\t') {
      while (i < p.size() && (p[i] == ' ' || p[i] == '\t')) ++i;
      re += "[ \\t]+";
    } else {
      re += EscapeRegex(std::string(1, p[i]));
      ++i;
    }
  }
  try {
    out.regex = std::regex(re, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw error(std::string("invalid regex: ") + e.what());
  }
  return out;
}

struct Match {
  size_t begin;
  size_t end;
  std::map<std::string, std::string> bound;
};

// The input split into lines, for searching and for showing context.
class Input {
 public:
  explicit Input(const std::string& text) : text_(text) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') line_starts_.push_back(i + 1);
    }
  }
  const std::string& text() const { return text_; }
  // 0-based line holding offset `pos`.
  int LineOf(size_t pos) const {
    return static_cast<int>(std::upper_bound(line_starts_.begin(), line_starts_.end(), pos) -
                            line_starts_.begin()) - 1;
  }
  size_t LineStart(int line) const { return line_starts_[line]; }
  size_t LineEnd(int line) const {
    size_t end = text_.find('\n', line_starts_[line]);
    return end == std::string::npos ? text_.size() : end;
  }
  int LineCount() const { return static_cast<int>(line_starts_.size()); }

  // The first match of `pattern` in [from, to), one line at a time so that a
  // match never spans a line break.
  std::optional<Match> Find(const CompiledPattern& pattern, size_t from, size_t to) const {
    if (from > to) return std::nullopt;
    for (int line = LineOf(from); line < LineCount() && LineStart(line) <= to; ++line) {
      const size_t begin = std::max(from, LineStart(line));
      const size_t end = std::min(to, LineEnd(line));
      if (begin > end) continue;
      std::smatch m;
      auto flags = std::regex_constants::match_default;
      // Mid-line, '^' must not match and '\b' must see the character before.
      if (begin > LineStart(line)) flags |= std::regex_constants::match_prev_avail;
      if (std::regex_search(text_.begin() + begin, text_.begin() + end, m, pattern.regex,
                            flags)) {
        Match match{begin + m.position(0), begin + m.position(0) + m.length(0), {}};
        for (const auto& [name, group] : pattern.defines) match.bound[name] = m.str(group);
        return match;
      }
    }
    return std::nullopt;
  }

  // Lines around offset `pos` as "  12 | text", a caret under `pos` (and
  // '~' under the rest of [pos, pos + length)), then `after` more lines.
  std::string Context(size_t pos, size_t length, int after) const {
    std::ostringstream out;
    const int line = LineOf(std::min(pos, text_.size()));
    for (int l = line; l < LineCount() && l <= line + after; ++l) {
      const std::string text = text_.substr(LineStart(l), LineEnd(l) - LineStart(l));
      out << "  " << (l + 1) << " | " << text << "\n";
      if (l == line) {
        const std::string gutter = "  " + std::to_string(l + 1) + " | ";
        const size_t column = pos - LineStart(l);
        const size_t tildes = length > 1 ? std::min(length, text.size() - column) - 1 : 0;
        out << std::string(gutter.size() + column, ' ') << "^" << std::string(tildes, '~')
            << "\n";
      }
    }
    return out.str();
  }

 private:
  const std::string& text_;
  std::vector<size_t> line_starts_;
};

std::string UsedVariables(const CompiledPattern& pattern, const Variables& vars) {
  std::string out;
  for (const std::string& name : pattern.uses) {
    out += "with \"" + name + "\" equal to \"" + vars.at(name) + "\"\n";
  }
  return out;
}

class Checker {
 public:
  Checker(const std::string& input, std::vector<Directive> directives)
      : input_(input), directives_(std::move(directives)) {}

  void Run() {
    std::vector<const Directive*> nots;
    size_t i = 0;
    while (i < directives_.size()) {
      const Directive& d = directives_[i];
      if (d.kind == Kind::kNot) {
        nots.push_back(&d);
        ++i;
      } else if (d.kind == Kind::kDag) {
        size_t group_end = i;
        while (group_end < directives_.size() && directives_[group_end].kind == Kind::kDag) {
          ++group_end;
        }
        MatchDagGroup(i, group_end, &nots);
        i = group_end;
      } else {
        MatchPositive(d, &nots);
        ++i;
      }
    }
    CheckNots(nots, pos_, input_.text().size());
  }

 private:
  // Binds the variables of `match` and moves past it.
  void Accept(const Match& match) {
    for (const auto& [name, value] : match.bound) vars_[name] = value;
  }

  void MatchPositive(const Directive& d, std::vector<const Directive*>* nots) {
    const CompiledPattern pattern = Compile(d, vars_);
    const std::optional<Match> match = input_.Find(pattern, pos_, input_.text().size());
    if (!match || (d.kind == Kind::kSame && input_.LineOf(match->begin) != input_.LineOf(pos_))) {
      std::string message = DirectiveHeader(d) + "\nerror: expected pattern not found" +
                            (d.kind == Kind::kSame ? " on the line of the previous match" : "") +
                            "\n" + UsedVariables(pattern, vars_) + "scanning from here:\n" +
                            input_.Context(pos_, 1, d.kind == Kind::kSame ? 0 : 5);
      throw CheckError{message};
    }
    if (d.kind == Kind::kNext) {
      const int lines_between = input_.LineOf(match->begin) - input_.LineOf(pos_);
      if (lines_between != 1) {
        throw CheckError{DirectiveHeader(d) + "\nerror: match is " +
                         (lines_between == 0 ? std::string("on the same line as")
                                             : std::to_string(lines_between) +
                                                   " lines after") +
                         " the previous match, not on the next line\nprevious match ends here:\n" +
                         input_.Context(pos_ == 0 ? 0 : pos_ - 1, 1, 0) + "match is here:\n" +
                         input_.Context(match->begin, match->end - match->begin, 0)};
      }
    }
    CheckNots(*nots, pos_, match->begin);
    nots->clear();
    Accept(*match);
    pos_ = match->end;
  }

  // Matches directives_[first, last) in any order, without overlaps.
  void MatchDagGroup(size_t first, size_t last, std::vector<const Directive*>* nots) {
    std::vector<std::pair<size_t, size_t>> taken;
    size_t group_begin = input_.text().size();
    size_t group_end = pos_;
    for (size_t k = first; k < last; ++k) {
      const Directive& d = directives_[k];
      const CompiledPattern pattern = Compile(d, vars_);
      size_t from = pos_;
      std::optional<Match> match;
      while ((match = input_.Find(pattern, from, input_.text().size()))) {
        auto overlap = std::find_if(taken.begin(), taken.end(), [&](const auto& range) {
          return match->begin < range.second && range.first < match->end;
        });
        if (overlap == taken.end()) break;
        from = std::max(overlap->second, match->begin + 1);
      }
      if (!match) {
        throw CheckError{DirectiveHeader(d) +
                         "\nerror: expected pattern not found (apart from the other CHECK-DAG "
                         "matches of its group)\n" +
                         UsedVariables(pattern, vars_) + "scanning from here:\n" +
                         input_.Context(pos_, 1, 5)};
      }
      taken.emplace_back(match->begin, match->end);
      group_begin = std::min(group_begin, match->begin);
      group_end = std::max(group_end, match->end);
      Accept(*match);
    }
    CheckNots(*nots, pos_, group_begin);
    nots->clear();
    pos_ = group_end;
  }

  void CheckNots(const std::vector<const Directive*>& nots, size_t from, size_t to) {
    for (const Directive* d : nots) {
      const CompiledPattern pattern = Compile(*d, vars_);
      if (const std::optional<Match> match = input_.Find(pattern, from, to)) {
        throw CheckError{DirectiveHeader(*d) + "\nerror: excluded pattern found\n" +
                         UsedVariables(pattern, vars_) +
                         input_.Context(match->begin, match->end - match->begin, 0)};
      }
    }
  }

  const Input input_;
  const std::vector<Directive> directives_;
  Variables vars_;
  size_t pos_ = 0;  // end of the previous match
};

}  // namespace

AssertionResult FileCheck(const std::string& input, const std::string& checks) {
  try {
    Checker checker(input, ParseDirectives(checks));
    checker.Run();
  } catch (const CheckError& error) {
    std::string message = "FileCheck failed: " + error.message;
    if (message.back() != '\n') message += '\n';
    return AssertionResult::Failure(message + "input was:\n" + input);
  }
  return AssertionResult::Success();
}

}  // namespace exla_test
