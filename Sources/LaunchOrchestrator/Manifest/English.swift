/// Small points of English grammar for messages that name types and values.
package enum English {
  /// `noun` with its indefinite article, chosen by sound: "a StoreHandle", "an AppSettings",
  /// "a URL", "an SQLiteStore", "a UserSession".
  package static func withArticle(_ noun: String) -> String {
    "\(startsWithVowelSound(noun) ? "an" : "a") \(noun)"
  }

  private static func startsWithVowelSound(_ word: String) -> Bool {
    let letters = Array(word.prefix(2))
    guard let first = letters.first else { return false }
    // An acronym is read letter by letter: "an SQL...", "an HTTP...", but "a URL".
    if letters.count == 2, letters.allSatisfy(\.isUppercase) {
      return "AEFHILMNORSX".contains(first)
    }
    let lowered = word.lowercased()
    if ["uni", "use", "usa", "usu", "uti", "ure", "eu", "one", "once"].contains(where: {
      lowered.hasPrefix($0)
    }) {
      return false
    }
    if ["hour", "honest", "honor", "honour", "heir"].contains(where: { lowered.hasPrefix($0) }) {
      return true
    }
    return "aeiou".contains(lowered.first ?? " ")
  }
}
