import OrchestrateCLI
import Testing

/// The option parser in-process: every way a command line can be wrong, and what each
/// declaration turns into.
@Suite("Command-line options")
struct CommandOptionsTests {
  private func error<Options: CommandOptions>(
    _ type: Options.Type, _ arguments: [String]
  ) -> CLIError? {
    do {
      _ = try Options.parse(arguments)
      return nil
    } catch {
      return error
    }
  }

  private let runUsage =
    "orchestrate run <manifest> [--report <file>] [--trace <file>] [--otlp <file>] [--max-concurrency <n>] [--budget <milestone=duration> ...] [--history <folder>] [--keep <n>] [--regression <share> ...] [--app-version <version[+build]>] [--reason <name>] [--prewarmed] [--first-launch] [--after-upgrade] [--safe-mode] [--data-dir <folder>] [--signal <name[@time]> ...] [--ensure <step[@time]> ...] [--no-cache] [--quiet] [--json]"

  @Test func turnsEveryDeclaredOptionIntoItsTypedProperty() throws {
    let options = try #require(
      try RunOptions.parse([
        "app.json", "--report", "r.json", "--trace=t.json", "--max-concurrency", "2",
        "--budget", "interactive=2s", "--budget", "firstFrame=250ms", "--quiet",
      ]))
    #expect(options.manifest == "app.json")
    #expect(options.report == "r.json")
    #expect(options.trace == "t.json")
    #expect(options.maxConcurrency == 2)
    #expect(
      options.budgets == [
        Budget(milestone: "interactive", limit: .seconds(2)),
        Budget(milestone: "firstFrame", limit: .milliseconds(250)),
      ])
    #expect(options.quiet)
    #expect(!options.json)
  }

  @Test func leavesOptionsThatWereNotGivenAtTheirDefaults() throws {
    let run = try #require(try RunOptions.parse(["app.json"]))
    #expect(run.report == nil && run.trace == nil && run.maxConcurrency == nil)
    #expect(run.budgets.isEmpty && !run.quiet && !run.json)
    let graph = try #require(try GraphOptions.parse(["app.json"]))
    #expect(graph.format == .dot)
    let mermaid = try #require(try GraphOptions.parse(["--format", "mermaid", "app.json"]))
    #expect(mermaid.format == .mermaid)
  }

  @Test func derivesTheUsageLineAndHelpFromTheDeclarations() {
    #expect(RunOptions.spec.usageLine == runUsage)
    #expect(ValidateOptions.spec.usageLine == "orchestrate validate <manifest> ...")
    #expect(
      RunOptions.spec.help.contains("  --report <file>                    Write the JSON report"))
    #expect(
      PluginsOptions.spec.help.hasSuffix(
        "OPTIONS:\n  -h, --help            Show help information.\n"))
  }

  @Test func everyCommandDeclaresEachNameOnceAndLeavesHelpToTheParser() {
    let specs = [
      RunOptions.spec, ValidateOptions.spec, PlanOptions.spec, GraphOptions.spec,
      PluginsOptions.spec, SchemaOptions.spec, CacheOptions.spec, BlameOptions.spec,
      CompareOptions.spec, StatsOptions.spec, ExportOptions.spec,
    ]
    for spec in specs {
      let names = spec.declarations.map(\.name)
      #expect(Set(names).count == names.count, "\(spec.configuration.name) repeats a name")
      #expect(!names.contains("--help"), "\(spec.configuration.name) redeclares --help")
      #expect(spec.help.contains("\n  -h, --help "))
    }
  }

  @Test func suggestsTheOptionMeantForAnUnknownOne() {
    let typo = error(RunOptions.self, ["app.json", "--reprot", "r.json"])
    #expect(typo?.message == "Unknown option '--reprot'. Did you mean '--report'?")
    #expect(typo?.usage == runUsage)
    #expect(typo?.exitCode == .usage)
    #expect(error(RunOptions.self, ["app.json", "-x"])?.message == "Unknown option '-x'.")
  }

  @Test func namesTheValueAnOptionIsMissing() {
    #expect(
      error(RunOptions.self, ["app.json", "--report"])?.message
        == "Missing value for '--report <file>'.")
    #expect(
      error(RunOptions.self, ["app.json", "--report", "--quiet"])?.message
        == "Missing value for '--report <file>' before '--quiet'; a value that starts with '-' is written '--report=--quiet'."
    )
    #expect(
      error(RunOptions.self, ["app.json", "--report", "-h"])?.message
        == "Missing value for '--report <file>' before '-h'; a value that starts with '-' is written '--report=-h'."
    )
  }

  @Test func takesADashAsAValueAndAnInlineValueThatStartsWithADash() throws {
    let options = try RunOptions.parse(["app.json", "--report", "-", "--trace=-odd.json"])
    #expect(options?.report == "-")
    #expect(options?.trace == "-odd.json")
  }

  @Test func rejectsValuesThatDoNotFitTheirOption() {
    #expect(
      error(RunOptions.self, ["app.json", "--max-concurrency", "0"])?.message
        == "The value '0' for '--max-concurrency <n>' must be a whole number of at least 1.")
    #expect(
      error(PlanOptions.self, ["app.json", "--max-concurrency=two"])?.message
        == "The value 'two' for '--max-concurrency <n>' must be a whole number of at least 1.")
    #expect(
      error(RunOptions.self, ["app.json", "--budget", "interactive"])?.message
        == "The value 'interactive' for '--budget' must look like 'interactive=2s'.")
    #expect(
      error(RunOptions.self, ["app.json", "--budget", "interactive=soon"])?.message
        == "The budget 'soon' for 'interactive' in '--budget' is not a duration; write it like '250ms', '2s' or '1.5m'."
    )
    #expect(
      error(RunOptions.self, ["app.json", "--budget", "interactive=-1"])?.message
        == "The budget '-1' for 'interactive' in '--budget' cannot be negative; write it like '250ms', '2s' or '1.5m'."
    )
    #expect(
      error(RunOptions.self, ["app.json", "--budget", "interactive=-soon"])?.message
        == "The budget '-soon' for 'interactive' in '--budget' is not a duration; write it like '250ms', '2s' or '1.5m'."
    )
    #expect(
      error(GraphOptions.self, ["app.json", "--format="])?.message
        == "The value for '--format <dot|mermaid>' is empty; give a dot or a mermaid.")
    #expect(
      error(RunOptions.self, ["app.json", "--help=x"])?.message
        == "The option '--help' takes no value.")
    #expect(
      error(CacheOptions.self, ["app.json"])?.message
        == "Missing expected argument '<manifest>' ('app.json' was taken as the <action>).")
    let format = error(GraphOptions.self, ["app.json", "--format", "mermiad"])
    #expect(
      format?.message
        == "Unknown format 'mermiad' for '--format'. Did you mean 'mermaid'? Use 'dot' or 'mermaid'."
    )
    #expect(format?.usage == "orchestrate graph <manifest> [--format <dot|mermaid>]")
    #expect(
      error(RunOptions.self, ["app.json", "--report="])?.message
        == "The value for '--report <file>' is empty; give a file.")
    #expect(
      error(PlanOptions.self, ["app.json", "--durations", ""])?.message
        == "The value for '--durations <report|folder>' is empty; give a report or a folder.")
    #expect(
      error(BlameOptions.self, ["r.json", "--milestone="])?.message
        == "The value for '--milestone <name>' is empty; give a name.")
    #expect(
      error(RunOptions.self, ["app.json", "--quiet=yes"])?.message
        == "The option '--quiet' takes no value.")
  }

  @Test func boundsAbsurdDurationsWhereTheyAreReadAndNamesEach() throws {
    // Bounded as a manifest's durations are, each named, never a crash (exit 132 or 134).
    for (value, problem) in [
      ("1e19", "is more than a century (3200000000s), the longest a duration may be"),
      ("1e308s", "is more than a century (3200000000s), the longest a duration may be"),
      (
        "99999999999999999999h",
        "is more than a century (3200000000s), the longest a duration may be"
      ),
      ("-1e-300", "cannot be negative"), ("nan", "is not a duration"), ("inf", "is not a duration"),
      ("0x10", "is not a duration"), ("1e", "is not a duration"),
    ] {
      #expect(
        error(RunOptions.self, ["app.json", "--budget", "interactive=\(value)"])?.message
          == "The budget '\(value)' for 'interactive' in '--budget' \(problem); write it like '250ms', '2s' or '1.5m'."
      )
      #expect(
        error(RunOptions.self, ["app.json", "--signal", "consent@\(value)"])?.message
          == "The time '\(value)' in '--signal consent@\(value)' \(problem); write it like '300ms' or '2s'."
      )
    }
    let plain = try #require(
      try RunOptions.parse(["app.json", "--budget", "interactive=-0", "--ensure", "search@1e3"]))
    #expect(plain.budgets.first?.limit == .zero)
    #expect(plain.ensures.first?.time == .seconds(1000))
  }

  @Test func acceptsASingleOptionOnlyOnceButRepeatsRepeatingOnesAndFlags() throws {
    #expect(
      error(RunOptions.self, ["app.json", "--report", "a.json", "--report", "b.json"])?.message
        == "The option '--report' can be given only once.")
    let options = try #require(try RunOptions.parse(["app.json", "--json", "--json"]))
    #expect(options.json)
  }

  @Test func countsThePositionalArguments() throws {
    #expect(error(RunOptions.self, [])?.message == "Missing expected argument '<manifest>'.")
    #expect(error(ValidateOptions.self, [])?.message == "Missing expected argument '<manifest>'.")
    #expect(
      error(PlanOptions.self, ["a.json", "b.json"])?.message
        == "Unexpected argument 'b.json'; 'plan' takes one manifest.")
    #expect(
      error(SchemaOptions.self, ["extra"])?.message
        == "Unexpected argument 'extra'; 'schema' takes none.")
    let validate = try #require(try ValidateOptions.parse(["a.json", "b.json", "c.json"]))
    #expect(validate.manifests == ["a.json", "b.json", "c.json"])
  }

  @Test func treatsEverythingAfterADoubleDashAndALoneDashAsArguments() throws {
    let options = try #require(try RunOptions.parse(["--quiet", "--", "--odd.json"]))
    #expect(options.manifest == "--odd.json")
    #expect(options.quiet)
    #expect(try #require(try RunOptions.parse(["-"])).manifest == "-")
    #expect(
      error(RunOptions.self, ["--", "a.json", "--json"])?.message
        == "Unexpected argument '--json'; 'run' takes one manifest.")
  }

  @Test func asksForHelpEvenWhenTheRestOfTheLineIsWrong() throws {
    #expect(try RunOptions.parse(["--help"]) == nil)
    #expect(try RunOptions.parse(["-h", "--max-concurrency", "0"]) == nil)
    #expect(
      error(RunOptions.self, ["--help", "--verbose"])?.message == "Unknown option '--verbose'.")
  }

  @Test func checksRulesBetweenOptionsAfterParsing() {
    let conflict = error(RunOptions.self, ["app.json", "--quiet", "--json"])
    #expect(conflict?.message == "'--quiet' and '--json' cannot be used together.")
    #expect(conflict?.usage == runUsage)
  }
}
