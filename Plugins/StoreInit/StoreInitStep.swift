import Foundation
import LaunchOrchestrator
import SQLiteStore

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// `store.init`: opens or creates the SQLite store and migrates it, in the same time whatever
/// its size; refuses files it did not create; recovers a damaged store by moving it aside
/// with its WAL (never deleting it) and creating a new one.
public struct StoreInitStep: StepPlugin {
  /// The kind name.
  public static let kind = "store.init"
  /// What the step does.
  public static let summary =
    "Opens or creates the SQLite store and applies its migrations (built-in books or music, or the app's folder of NNN_name.sql files); refuses files it did not create; moves a damaged store aside with its WAL and creates a new one."
  /// What a manifest gives the step.
  public struct Parameters: StepParameters {
    /// SQLite keeps the store's WAL, shared memory and rollback journal beside it, and the
    /// step its creation record, damage marker and recovery note (``StoreHandle``).
    @Parameter(
      "The database file; relative to the data folder. Its folder must exist unless createFolders.",
      isPath: true, rewritesFile: true,
      companions: ["-wal", "-shm", "-journal", ".created", ".damaged", ".recovering"])
    var path: String
    @Parameter(
      "A built-in schema; leave it out when giving 'migrations'.",
      oneOf: StoreSchema.all.map(\.name), defaultDescription: StoreSchema.books.name)
    var schema: String?
    @Parameter(
      "The app's own schema: a folder of NNN_name.sql files shipped with the manifest (relative to its folder), applied in order; example: manifests/screensort.json with manifests/migrations/screensort.",
      isPath: true, excludes: ["schema"])
    var migrations: String?
    @Parameter("Open for reading only: no migrations, no recovery.") var readOnly = false
    @Parameter(
      "Create the store when the file does not exist.", defaultDescription: "true unless readOnly",
      excludes: ["readOnly"])
    var create: Bool?
    @Parameter("Create the store's missing parent folders instead of failing.")
    var createFolders = false
    @Parameter("Add the schema to an existing database that has tables of its own and no version.")
    var adopt = false
    @Parameter("How long to wait for another writer.") var busyTimeout = Duration.seconds(5)
    @Parameter(
      "Run PRAGMA quick_check when opening: reads the whole store, so launch time grows with it; prefer a deferred store.check step."
    )
    var integrityCheck = false
    /// Where the manifest is, to read the migrations folder when it loads.
    @ManifestDirectory var manifestDirectory: URL?

    /// No path yet: a manifest must give one.
    public init() {}
  }

  private let path: String
  private let schemaSource: SchemaSource
  private let readOnly: Bool
  private let create: Bool
  private let createFolders: Bool
  private let adopt: Bool
  private let busyTimeout: Duration
  private let integrityCheck: Bool

  /// A built-in schema, or an app's folder read when the manifest loaded or, without a
  /// manifest folder to resolve it against then, when the step runs.
  private enum SchemaSource: Sendable {
    case loaded(StoreSchema)
    case folder(String)
  }

  /// Checks the names in the migrations folder (``StoreSchema/init(folder:)``). The
  /// declarations refuse `schema` with `migrations`, and `create` with `readOnly`, in params.
  public init(parameters: Parameters) throws {
    path = parameters.path
    if let migrations = parameters.migrations {
      if let directory = parameters.manifestDirectory {
        let folder = StepContext.resolve(migrations, against: directory)
        do {
          schemaSource = .loaded(try StoreSchema(folder: folder))
        } catch {
          throw ParameterError("migrations", error.message + ".")
        }
      } else {
        schemaSource = .folder(migrations)
      }
    } else {
      // The declaration lets only the built-in schemas' names through.
      schemaSource = .loaded(parameters.schema.flatMap(StoreSchema.named) ?? .books)
    }
    readOnly = parameters.readOnly
    create = parameters.create ?? !readOnly
    createFolders = parameters.createFolders
    adopt = parameters.adopt
    busyTimeout = parameters.busyTimeout
    integrityCheck = parameters.integrityCheck
  }

  /// Reads and checks every file of the migrations folder, not only those a store lacks, for
  /// `orchestrate validate`: a launch reads a migration only to apply it.
  ///
  /// Each file's problem is said at once; when every file reads, the migrations are applied
  /// to an empty database in memory, as a new store's are before it is created, so that a
  /// statement that fails is named before the app ships, not when a launch needs it.
  public func checkShippedFiles() throws {
    guard case .loaded(let schema) = schemaSource else { return }
    var problems: [String] = []
    var scripts: [(file: URL, sql: String)] = []
    for migration in schema.migrations {
      guard let file = migration.file else { continue }
      do {
        scripts.append((file, try migration.checkedSQL()))
      } catch {
        problems.append(error.message)
      }
    }
    if problems.isEmpty, !scripts.isEmpty {
      let memory = try SQLiteConnection.inMemory()
      // The first failure only: each migration builds on those before it.
      for (file, sql) in scripts {
        do {
          try memory.executeScript(sql)
        } catch {
          let line = error.line.map { ":\($0)" } ?? ""
          problems.append(
            "the migration '\(file.path)\(line)' fails on a new store: \(error.message); a launch that applies it would fail"
          )
          break
        }
      }
    }
    guard !problems.isEmpty else { return }
    throw ParameterError("migrations", StoreSchema.sentences(problems) + ".")
  }

  /// The database file itself: a symbolic link at `url` (the app's, into a shared container)
  /// is followed, as SQLite follows it, so that the store is looked at, recovered and recorded
  /// where SQLite keeps it with its WAL, and the link stays the app's. A link another user
  /// planted in a folder everyone may write to, a loop, or a link into a folder that does not
  /// exist is refused (``SafeFiles/checkReplaceable(_:creatingLinkTarget:forReading:)``). The
  /// store is then opened without following links (`SQLITE_OPEN_NOFOLLOW`): a link planted at
  /// the file after this look is refused, not followed.
  private static func databaseFile(_ url: URL, forReading: Bool) throws -> URL {
    var info = stat()
    guard lstat(url.path, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFLNK) else {
      return url
    }
    return try SafeFiles.checkReplaceable(url, creatingLinkTarget: true, forReading: forReading)
  }

  /// SQLite calls block their thread.
  public var isBlocking: Bool { true }

  /// Opens, checks, recovers and migrates the store.
  public func run(_ context: StepContext) async throws -> StoreHandle {
    let schema: StoreSchema
    switch schemaSource {
    case .loaded(let loaded): schema = loaded
    case .folder(let folder): schema = try StoreSchema(folder: context.resolveResource(folder))
    }
    let file = try Self.databaseFile(context.resolve(path), forReading: readOnly)
    let opener = StoreOpener(
      url: file, schema: schema, readOnly: readOnly, create: create,
      createFolders: createFolders, adopt: adopt, busyTimeout: busyTimeout,
      integrityCheck: integrityCheck, context: context)
    return try opener.openStore()
  }
}
