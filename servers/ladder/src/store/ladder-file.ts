import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Scope } from './ask-kinds.js';
import { openDatabase, systemClock, type Clock } from './database.js';
import { SqliteRungStore } from './rungs-sqlite.js';
import type { Rung, RungStore, RungWrite, SearchOptions, SearchResult } from './rungs.js';
import { SqliteWorkQueueStore } from './sqlite-work-queue.js';
import type {
  AnswerInput,
  Ask,
  AskState,
  AskWithHistory,
  Claim,
  ClaimableAsk,
  ClaimOptions,
  CreatedToken,
  Lane,
  LaneState,
  LaneWithHistory,
  PostAskInput,
  PostedAsk,
  ProposeLaneInput,
  RoleGrant,
  RoleGrantInput,
  TokenInfo,
  WorkQueueOptions,
  WorkQueueStore,
} from './work-queue.js';

/** The two stores of one opened database. */
export interface LadderStores {
  readonly work: SqliteWorkQueueStore;
  readonly rungs: SqliteRungStore;
}

export interface LadderFileOptions {
  readonly workQueue?: WorkQueueOptions;
  readonly clock?: Clock;
  /** Runs on each database opened, the file or the stand-in, before any call uses it (the server seeds its owner here). */
  readonly prepare?: (stores: LadderStores) => Promise<void>;
}

/**
 * The ladder's SQLite file, opened by the first call that needs it rather than at start, so a
 * server that answered no call (a bare start, tools/list, `bulkhead tools`) makes no file. A
 * writing call creates the file, with its migrations, as the server used to at start. A reading
 * call made while no file exists is answered by a private in-memory database with the same
 * migrations and preparation, which is what a fresh file would answer (no rungs, no lanes, the
 * seeded owner), and the file is still not made. As soon as the file exists (made by a write of
 * this server, by another server on it, or by `bulkhead-ladder token create`), every call uses it.
 */
export class LadderFile {
  private file: Promise<LadderStores> | undefined;
  private standIn: Promise<LadderStores> | undefined;
  /** Every database opened, to close them all at once. */
  private readonly opened: LadderStores[] = [];
  private closed = false;

  constructor(
    readonly path: string,
    private readonly options: LadderFileOptions = {},
  ) {}

  /** The stores a reading call uses: the file when it exists, else the empty stand-in. */
  reading(): Promise<LadderStores> {
    if (this.file) return this.file;
    if (existsSync(this.path)) return this.openFile(false);
    if (!this.standIn) {
      const opening = this.open(':memory:', false);
      this.standIn = opening;
      opening.catch(() => {
        if (this.standIn === opening) this.standIn = undefined;
      });
    }
    return this.standIn;
  }

  /** The stores a writing call uses: the file, made now when it is missing. */
  writing(): Promise<LadderStores> {
    return this.file ?? this.openFile(true);
  }

  private openFile(create: boolean): Promise<LadderStores> {
    if (create) mkdirSync(dirname(this.path), { recursive: true });
    const opening = this.open(this.path, !create);
    this.file = opening;
    // A failed open (a folder that cannot be made, a file removed meanwhile) is tried again by the next call.
    opening.catch(() => {
      if (this.file === opening) this.file = undefined;
    });
    return opening;
  }

  private async open(path: string, mustExist: boolean): Promise<LadderStores> {
    if (this.closed) throw new Error('the ladder database is closed');
    const clock = this.options.clock ?? systemClock;
    const db = openDatabase(path, { mustExist });
    let stores: LadderStores;
    try {
      stores = { work: new SqliteWorkQueueStore(db, this.options.workQueue, clock), rungs: new SqliteRungStore(db, clock) };
    } catch (error) {
      db.close();
      throw error;
    }
    // Kept open until close() even once the file answers: a call may still hold the stand-in between two statements.
    this.opened.push(stores);
    await this.options.prepare?.(stores);
    return stores;
  }

  close(): void {
    this.closed = true;
    for (const stores of this.opened.splice(0)) stores.work.close();
  }
}

/** The work queue on a LadderFile: each method reads or writes through the file's stores for it. */
export class LazyWorkQueueStore implements WorkQueueStore {
  constructor(private readonly file: LadderFile) {}

  private async read(): Promise<SqliteWorkQueueStore> {
    return (await this.file.reading()).work;
  }
  private async write(): Promise<SqliteWorkQueueStore> {
    return (await this.file.writing()).work;
  }

  async proposeLane(input: ProposeLaneInput, actor: string): Promise<LaneWithHistory> {
    return (await this.write()).proposeLane(input, actor);
  }
  async standingLaneId(repo: string, createdBy?: string): Promise<string> {
    // Only a writing call (one that names who creates the lane) may make the standing lane.
    return (await (createdBy === undefined ? this.read() : this.write())).standingLaneId(repo, createdBy);
  }
  async getLane(laneId: string): Promise<LaneWithHistory> {
    return (await this.read()).getLane(laneId);
  }
  async listLanes(repo: string, options?: { state?: LaneState; withHistory?: boolean }): Promise<(Lane | LaneWithHistory)[]> {
    return (await this.read()).listLanes(repo, options);
  }
  async setLaneState(laneId: string, state: LaneState, actor: string, reason?: string): Promise<LaneWithHistory> {
    return (await this.write()).setLaneState(laneId, state, actor, reason);
  }
  async addRelated(laneId: string, relatedLaneId: string, actor: string): Promise<LaneWithHistory> {
    return (await this.write()).addRelated(laneId, relatedLaneId, actor);
  }

  async postAsk(input: PostAskInput, actor: string): Promise<PostedAsk> {
    return (await this.write()).postAsk(input, actor);
  }
  async addDependencies(askId: string, dependsOn: string[], actor: string): Promise<Ask> {
    return (await this.write()).addDependencies(askId, dependsOn, actor);
  }
  async getAsk(askId: string): Promise<AskWithHistory> {
    return (await this.read()).getAsk(askId);
  }
  async listAsks(laneId: string, options?: { state?: AskState; limit?: number }): Promise<Ask[]> {
    return (await this.read()).listAsks(laneId, options);
  }
  async queryClaimable(laneId: string, actor: string, options?: { kind?: string; limit?: number }): Promise<ClaimableAsk[]> {
    return (await this.read()).queryClaimable(laneId, actor, options);
  }
  async claim(askId: string, actor: string, options?: ClaimOptions): Promise<Claim> {
    return (await this.write()).claim(askId, actor, options);
  }
  async claimNext(laneId: string, actor: string, options?: ClaimOptions & { kind?: string }): Promise<Claim | undefined> {
    return (await this.write()).claimNext(laneId, actor, options);
  }
  async release(askId: string, fence: number, actor: string): Promise<Ask> {
    return (await this.write()).release(askId, fence, actor);
  }
  async answer(input: AnswerInput, actor: string): Promise<Ask> {
    return (await this.write()).answer(input, actor);
  }
  async cancel(askId: string, actor: string, reason?: string): Promise<Ask> {
    return (await this.write()).cancel(askId, actor, reason);
  }

  async grantRole(input: RoleGrantInput, actor: string): Promise<RoleGrant> {
    return (await this.write()).grantRole(input, actor);
  }
  async revokeRole(input: RoleGrantInput, actor: string): Promise<boolean> {
    return (await this.write()).revokeRole(input, actor);
  }
  async listRoles(repo: string, options?: { principal?: string; laneId?: string }): Promise<RoleGrant[]> {
    return (await this.read()).listRoles(repo, options);
  }
  async seedOwner(repo: string, principal: string): Promise<void> {
    return (await this.write()).seedOwner(repo, principal);
  }
  async scopesOn(laneId: string, principal: string): Promise<Scope[]> {
    return (await this.read()).scopesOn(laneId, principal);
  }

  async createToken(actor: string): Promise<CreatedToken> {
    return (await this.write()).createToken(actor);
  }
  async verifyToken(secret: string): Promise<string | undefined> {
    // No file, no tokens: a bearer token checked before the first write makes no file.
    return (await this.read()).verifyToken(secret);
  }
  async revokeToken(id: string): Promise<boolean> {
    return (await this.write()).revokeToken(id);
  }
  async listTokens(actor?: string): Promise<TokenInfo[]> {
    return (await this.read()).listTokens(actor);
  }

  close(): void {
    this.file.close();
  }
}

/** The rungs on a LadderFile, like LazyWorkQueueStore. */
export class LazyRungStore implements RungStore {
  constructor(private readonly file: LadderFile) {}

  async write(repo: string, rungs: readonly RungWrite[], actor: string): Promise<Rung[]> {
    return (await this.file.writing()).rungs.write(repo, rungs, actor);
  }
  async get(repo: string, path: string): Promise<Rung | undefined> {
    return (await this.file.reading()).rungs.get(repo, path);
  }
  async children(repo: string, path: string): Promise<Rung[]> {
    return (await this.file.reading()).rungs.children(repo, path);
  }
  async list(repo: string): Promise<Rung[]> {
    return (await this.file.reading()).rungs.list(repo);
  }
  async history(repo: string, path: string): Promise<Rung[]> {
    return (await this.file.reading()).rungs.history(repo, path);
  }
  async search(query: string, options: SearchOptions): Promise<SearchResult> {
    return (await this.file.reading()).rungs.search(query, options);
  }
  async reindex(repo: string): Promise<number> {
    return (await this.file.writing()).rungs.reindex(repo);
  }
}
