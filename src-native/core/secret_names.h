// The password name rule both backends apply before reading a text field's
// value (Backend::SetSecureNameHeuristic): a field whose name says it holds a
// password is treated as secure, so its plaintext never enters a result. The
// renderer applies a wider rule of its own (lib/render/roles.ts secureByName);
// this one only keeps the value from being read.
#pragma once

#include <cctype>
#include <string>

namespace axsnap {

// Whether an accessible name says "password": a whole word password, passcode,
// passphrase or pin (ASCII case-insensitive, so "Pinned" and "spinner" are not),
// or 密码 / 密碼 / パスワード / 비밀번호 anywhere.
inline bool NameSaysPassword(const std::string& name) {
  for (const char* cjk : {"\xe5\xaf\x86\xe7\xa0\x81", "\xe5\xaf\x86\xe7\xa2\xbc",
                          "\xe3\x83\x91\xe3\x82\xb9\xe3\x83\xaf\xe3\x83\xbc\xe3\x83\x89",
                          "\xeb\xb9\x84\xeb\xb0\x80\xeb\xb2\x88\xed\x98\xb8"})
    if (name.find(cjk) != std::string::npos) return true;
  std::string word;
  auto isWordChar = [](unsigned char c) { return std::isalnum(c) || c >= 0x80; };
  for (size_t i = 0; i <= name.size(); ++i) {
    const unsigned char c = i < name.size() ? static_cast<unsigned char>(name[i]) : ' ';
    if (isWordChar(c)) {
      word.push_back(static_cast<char>(std::tolower(c)));
      continue;
    }
    if (word == "password" || word == "passwort" || word == "passcode" || word == "passphrase" || word == "pin" ||
        word == "passwords")
      return true;
    word.clear();
  }
  return false;
}

}  // namespace axsnap
