"""benchrun's HeTu benchmark app (hetudb 0.2.0).

Four client-callable endpoints with the semantics of HeTu's published RPC benchmark, so the
numbers are comparable (see PROTOCOL.md for what goes over the wire):

  hello_world()            -> ["世界收到"]          endpoint, no Redis at all
  just_get(row_id)         -> [race_retries]       read one Counter row by primary key
  upsert(number)           -> [race_retries]       read by unique `number`, rename, commit
  exchange_data(name, n)   -> [race_retries]       upsert by name + upsert by number, one commit
  seed(first, count)       -> [rows_written]       helper: make rows id=number=first..first+count-1
                                                   (numbers that already exist are skipped)

`race_retries` is ctx.race_count of the attempt that committed: 0 unless the transaction lost
an optimistic-concurrency race and HeTu re-ran it. Every endpoint is callable by anonymous
connections (Permission.EVERYBODY): a load test does not log in.

just_get reads ids 1..30000 like the published benchmark; call `seed` first to make those rows
exist (hack/hetu-smoke.sh does), otherwise the reads are misses, which HeTu answers the same way.
"""

import random
import string

import numpy as np

import hetu

NAMESPACE = "bench"
NAME_CHARS = string.ascii_uppercase + string.digits
SEED_MAX_PER_CALL = 1000


# Readable by everybody so anonymous load clients can also subscribe to rows (sub/updt).
@hetu.define_component(namespace=NAMESPACE, volatile=True, permission=hetu.Permission.EVERYBODY)
class Counter(hetu.BaseComponent):
    """Rows keyed by a unique integer; `label` is rewritten by upsert/exchange_data."""

    number: np.int32 = hetu.property_field(0, unique=True)
    label: str = hetu.property_field("Unnamed", dtype="<U16")


@hetu.define_component(namespace=NAMESPACE, volatile=True)
class Nickname(hetu.BaseComponent):
    """Rows keyed by a unique short string; `number` is rewritten by exchange_data."""

    name: str = hetu.property_field("", unique=True, dtype="<U16")
    number: np.int32 = hetu.property_field(0)


def random_name() -> str:
    return "".join(random.choices(NAME_CHARS, k=3))


# An endpoint, not a system: no transaction, no Redis. (hetudb 0.2.0 rejects a system that
# references no component: "System hello_world 没有引用任何Component".)
@hetu.define_endpoint(namespace=NAMESPACE, permission=hetu.Permission.EVERYBODY)
async def hello_world(ctx: hetu.EndpointContext):
    return hetu.ResponseToClient(["世界收到"])


@hetu.define_system(
    namespace=NAMESPACE, components=(Counter,), permission=hetu.Permission.EVERYBODY
)
async def just_get(ctx: hetu.SystemContext, row_id):
    await ctx.repo[Counter].get(id=int(row_id))
    return hetu.ResponseToClient([ctx.race_count])


@hetu.define_system(
    namespace=NAMESPACE, components=(Counter,), permission=hetu.Permission.EVERYBODY
)
async def upsert(ctx: hetu.SystemContext, number):
    async with ctx.repo[Counter].upsert(number=int(number)) as row:
        row.label = random_name()
    return hetu.ResponseToClient([ctx.race_count])


@hetu.define_system(
    namespace=NAMESPACE,
    components=(Nickname, Counter),
    permission=hetu.Permission.EVERYBODY,
)
async def exchange_data(ctx: hetu.SystemContext, name, number):
    async with ctx.repo[Nickname].upsert(name=str(name)) as by_name:
        by_name.number = int(number)
    async with ctx.repo[Counter].upsert(number=int(number)) as by_number:
        by_number.label = str(name)
    return hetu.ResponseToClient([ctx.race_count])


@hetu.define_system(
    namespace=NAMESPACE, components=(Counter,), permission=hetu.Permission.EVERYBODY
)
async def seed(ctx: hetu.SystemContext, first, count):
    first, count = int(first), min(int(count), SEED_MAX_PER_CALL)
    written = 0
    for row_id in range(first, first + count):
        # Skip numbers that upsert()/exchange_data() already inserted under another id:
        # `number` is unique, re-inserting it would be a UniqueViolation.
        if await ctx.repo[Counter].get(number=row_id) is not None:
            continue
        async with ctx.repo[Counter].upsert(id=row_id) as row:
            row.number = row_id
        written += 1
    return hetu.ResponseToClient([written])
