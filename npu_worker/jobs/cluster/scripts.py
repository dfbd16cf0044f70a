"""The Lua scripts that change a shared job: each runs atomically inside Redis, so two nodes can never
interleave half of one change with half of another.

Why scripts: an event's `seq` must be its position in the job's log on every node, a section must be
`ok` exactly once even when two nodes ran it (a reclaimed section whose first owner was only slow),
and nothing may follow `done`. Each of those is a check and a write that must happen as one step.

Keys (all under the `npu:` prefix, `{id}` a job id): `job:{id}` hash (spec, total, seq, next, done, began, finished,
ok, fail, node), `log:{id}` stream (entry id `0-<seq>`, field `e` = the event JSON), `final:{id}`
hash idx → ok|fail, `wav:{id}:{idx}` the section's wav (uploaded to `wav:{id}:{idx}:up:{token}` first,
`wav_upload.py`; its token in the job's `wav:{idx}`), `pending` the sections not yet final over
all jobs (the queue bound), `q:first` / `q:batch` the work streams, `ready:{node}` the accepting
node's files to write. (`pcm:{id}`, a streaming job's audio, is written with plain commands:
`pcm_stream.py`.)
"""

from __future__ import annotations

from .lua_functions import ADVANCE, CLOCK, DONE, RUN, SEQ, WAITING

# KEYS: job, log, pending, jobs, q_first, q_batch
# ARGV: id, spec, total, max_queue, window, start, now, node, carry (1: the first item carries the spec),
#   preview (1: a preview, listed in KEYS[4] = `previews` instead of `jobs`, and ended apart: `finish`),
#   ref (the reference wav it speaks with, '' for none: VOICE_USER reads it)
# `began` (Redis's clock) is what `done`'s elapsed_total_sec counts from.
CREATE = (
    CLOCK
    + RUN
    + WAITING
    + """
if redis.call('EXISTS', KEYS[1]) == 1 then return 1 end  -- a retried call: already recorded
for _, key in ipairs({KEYS[5], KEYS[6], KEYS[4]}) do  -- checked before the first write (see above)
  local kind = redis.call('TYPE', key).ok
  if kind ~= 'none' and kind ~= (key == KEYS[4] and 'zset' or 'stream') then
    error('npu: ' .. key .. ' is a ' .. kind .. ', not of ours')
  end
end
if redis.call('EXISTS', KEYS[2]) == 1 then error('npu: ' .. KEYS[2] .. ' exists before its job') end
local total = tonumber(ARGV[3])
local waiting = waiting(KEYS[3])
if waiting + total > tonumber(ARGV[4]) then return -waiting - 1 end
redis.call('INCRBY', KEYS[3], total)
redis.call('HSET', KEYS[1], 'spec', ARGV[2], 'total', total, 'seq', 1, 'next', ARGV[5], 'done', 0,
  'ok', 0, 'fail', 0, 'created', ARGV[7], 'began', clock(), 'node', ARGV[8], 'preview', ARGV[10],
  'ref', ARGV[11] or '', 'run', run_id())
redis.call('XADD', KEYS[2], '0-1', 'e', ARGV[6])
redis.call('ZADD', KEYS[4], ARGV[7], ARGV[1])
for pos = 0, tonumber(ARGV[5]) - 1 do
  if pos == 0 and ARGV[9] == '1' then
    redis.call('XADD', KEYS[5], '*', 'job', ARGV[1], 'pos', pos, 'spec', ARGV[2])
  elseif pos == 0 then
    redis.call('XADD', KEYS[5], '*', 'job', ARGV[1], 'pos', pos)
  else
    redis.call('XADD', KEYS[6], '*', 'job', ARGV[1], 'pos', pos)
  end
end
return 1
"""
)

# KEYS: job, log  ARGV: event  → the event's seq, or 0 when the job has ended (nothing follows done)
APPEND = (
    SEQ
    + """
if redis.call('HGET', KEYS[1], 'done') ~= '0' then return 0 end
local seq, usable = next_seq(KEYS[1], KEYS[2])
return log_event(KEYS[1], KEYS[2], seq, usable, ARGV[1])
"""
)

# KEYS: job, log, final, pending, finished, q_batch
# ARGV: id, idx, event, kind (ok|fail), advance (1: also queue the job's next section)
# → {seq of the final event, or 0 when it was a duplicate (already final) or the job had ended;
#    the `done` it logged after it ('' when the job goes on)}.
FINAL = (
    ADVANCE
    + DONE
    + WAITING
    + """
if redis.call('HGET', KEYS[1], 'done') ~= '0' then return {0, ''} end
if redis.call('HEXISTS', KEYS[3], ARGV[2]) == 1 then return {0, ''} end
local total = check_job(KEYS[1], KEYS[6])
local seq, usable = next_seq(KEYS[1], KEYS[2])
waiting(KEYS[4])  -- the first write: a counter not of ours is recounted before it is decremented
redis.call('HSET', KEYS[3], ARGV[2], ARGV[4])
log_event(KEYS[1], KEYS[2], seq, usable, ARGV[3])
redis.call('DECR', KEYS[4])
redis.call('HINCRBY', KEYS[1], ARGV[4], 1)
if ARGV[5] == '1' then advance(KEYS[1], KEYS[6], ARGV[1], ARGV[2]) end
local done = ''
if redis.call('HLEN', KEYS[3]) >= total then
  local _, body = finish(KEYS[1], KEYS[2], KEYS[3], KEYS[5], ARGV[1], false)
  done = body
end
return {seq, done}
"""
)

# KEYS: job, final, wav, ready, q_batch, staged  ARGV: id, idx, token, size, duration, elapsed, cached
# The engine node's half of `ok`: the audio, uploaded in pieces to `staged` (`wav_upload.py`), is moved
# to the section's key (never half a wav), its token kept in the record (`wav:{idx}`: the writer's check
# that no other run's wav replaced it mid-read), and the accepting node is told to write its file and log
# `ok`; a section already final keeps its first audio. → 1, 0 (final already, ended), -1 (no staged copy
# of that size: upload again); a retried call whose first was applied (its reply lost) → 1 again.
MADE = (
    ADVANCE
    + """
if redis.call('HGET', KEYS[1], 'wav:' .. ARGV[2]) == ARGV[3] then return 1 end
if redis.call('HGET', KEYS[1], 'done') ~= '0' or redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then
  redis.call('DEL', KEYS[6])
  return 0
end
check_job(KEYS[1], KEYS[5])
local kind = redis.call('TYPE', KEYS[4]).ok
if kind ~= 'stream' and kind ~= 'none' then error('npu: ' .. KEYS[4] .. ' is not a stream') end
if ARGV[4] == '0' then
  redis.call('SET', KEYS[3], '')
elseif redis.call('STRLEN', KEYS[6]) ~= tonumber(ARGV[4]) then
  return -1
else
  redis.call('RENAME', KEYS[6], KEYS[3])
  redis.call('PERSIST', KEYS[3])
end
redis.call('HSET', KEYS[1], 'wav:' .. ARGV[2], ARGV[3])
redis.call('XADD', KEYS[4], '*', 'job', ARGV[1], 'idx', ARGV[2], 'duration', ARGV[5],
  'elapsed', ARGV[6], 'cached', ARGV[7])
advance(KEYS[1], KEYS[5], ARGV[1], ARGV[2])
return 1
"""
)

# KEYS: job, log, final, pending, finished, q_batch, wav, staged  ARGV: id, idx, event (`ok`), token, size
# A section with no file to write (a preview without `output_path`): the engine node stores the audio
# (moved from `staged`, as MADE) and logs `ok` itself in one step, as FINAL would after the writer's hop;
# still `ok` once per section. Size '' is no copy to store (a preview's: no route serves it). → as
# FINAL's; {-1, ''}: no staged copy of that size (upload again). Its reply is kept in the record
# (`made_ok:{idx}`: token, seq, `done`), so a retried call whose first was applied (its reply lost)
# answers as it did: it was {0, ''}, and the node that logged the `ok` and `done` counted neither.
MADE_OK = (
    ADVANCE
    + DONE
    + WAITING
    + """
local answered = redis.call('HGET', KEYS[1], 'made_ok:' .. ARGV[2])
if answered then
  local token, seq, done = string.match(answered, '^(%x+) (%d+) (.*)$')
  if token == ARGV[4] then return {tonumber(seq), done} end
end
if redis.call('HGET', KEYS[1], 'done') ~= '0' or redis.call('HEXISTS', KEYS[3], ARGV[2]) == 1 then
  redis.call('DEL', KEYS[8])
  return {0, ''}
end
local total = check_job(KEYS[1], KEYS[6])
if ARGV[5] ~= '' and redis.call('STRLEN', KEYS[8]) ~= tonumber(ARGV[5]) then return {-1, ''} end
local seq, usable = next_seq(KEYS[1], KEYS[2])
waiting(KEYS[4])
redis.call('HSET', KEYS[3], ARGV[2], 'ok')
if ARGV[5] ~= '' then
  redis.call('RENAME', KEYS[8], KEYS[7])
  redis.call('PERSIST', KEYS[7])
  redis.call('HSET', KEYS[1], 'wav:' .. ARGV[2], ARGV[4])
end
log_event(KEYS[1], KEYS[2], seq, usable, ARGV[3])
redis.call('DECR', KEYS[4])
redis.call('HINCRBY', KEYS[1], 'ok', 1)
advance(KEYS[1], KEYS[6], ARGV[1], ARGV[2])
local done = ''
if redis.call('HLEN', KEYS[3]) >= total then
  local _, body = finish(KEYS[1], KEYS[2], KEYS[3], KEYS[5], ARGV[1], false)
  done = body
end
redis.call('HSET', KEYS[1], 'made_ok:' .. ARGV[2], ARGV[4] .. ' ' .. string.format('%d', seq) .. ' ' .. done)
return {seq, done}
"""
)

# KEYS: job, log, final, pending, finished  ARGV: id  → {seq of `done`, or 0 if it had ended; the `done`}
CANCEL = (
    ADVANCE
    + DONE
    + WAITING
    + """
if redis.call('HGET', KEYS[1], 'done') ~= '0' then return {0, ''} end
local left = check_job(KEYS[1], 'npu:q:batch') - redis.call('HLEN', KEYS[3])
next_seq(KEYS[1], KEYS[2])  -- its checks, before the first write
waiting(KEYS[4])
redis.call('DECRBY', KEYS[4], left)
local seq, done = finish(KEYS[1], KEYS[2], KEYS[3], KEYS[5], ARGV[1], true)
redis.call('PUBLISH', 'npu:cancel', ARGV[1])
return {seq, done}
"""
)

# KEYS: nodes, q_first, q_batch  ARGV: gone_after (seconds)  → the node ids forgotten
# A node silent that long by Redis's clock (or a beat that far ahead of it: not of ours) is gone for
# good (scaled down, its state dir lost): its heartbeat entry goes, its writers' stream when nothing
# waits there, and its consumer in the engines' group when it holds no item. Anything still waiting for it stays (its jobs' files, its claimed
# sections, which a peer takes over); a node that does come back makes all of it again at its start
# (the heartbeat at once, the groups when its reads meet NOGROUP).
FORGET_NODES = (
    CLOCK
    + """
local now = clock()
local gone = {}
local rows = redis.call('HGETALL', KEYS[1])
for i = 1, #rows, 2 do
  local ok, body = pcall(cjson.decode, rows[i + 1])
  local seen = ok and type(body) == 'table' and tonumber(body.seen)
  if seen and math.abs(now - seen) > tonumber(ARGV[1]) then  -- a day ahead of Redis's clock: not of ours
    local node = rows[i]
    redis.call('HDEL', KEYS[1], node)
    local ready = 'npu:ready:' .. node
    local kind = redis.call('TYPE', ready).ok
    if kind == 'stream' and redis.call('XLEN', ready) == 0 then redis.call('DEL', ready) end
    for _, stream in ipairs({KEYS[2], KEYS[3]}) do
      local consumers = redis.pcall('XINFO', 'CONSUMERS', stream, 'engines')
      if type(consumers) == 'table' and consumers.err == nil then
        for _, consumer in ipairs(consumers) do
          local name, pending
          for j = 1, #consumer, 2 do
            if consumer[j] == 'name' then name = consumer[j + 1] end
            if consumer[j] == 'pending' then pending = consumer[j + 1] end
          end
          if name == node and pending == 0 then
            redis.call('XGROUP', 'DELCONSUMER', stream, 'engines', node)
          end
        end
      end
    end
    table.insert(gone, node)
  end
end
return gone
"""
)

# KEYS: jobs, previews  ARGV: ref (a reference wav's path)
# → {id, preview ('1' or '0')} of a job under way (on any node) that speaks with it, else an empty list.
# A stored voice's delete asks this first: the job's remaining sections would read the wav it removes.
# A record made before `ref` was kept is read from its spec; a value not of ours is skipped.
# It reads every listed job's record: 20 ms with 5 000 kept jobs, 500 of them under way (Redis waits).
VOICE_USER = """
for _, list in ipairs(KEYS) do
  local ids = redis.pcall('ZRANGE', list, 0, -1)
  if type(ids) == 'table' and ids.err == nil then
    for _, id in ipairs(ids) do
      local key = 'npu:job:' .. id
      local job = redis.pcall('HMGET', key, 'done', 'ref', 'preview')
      if type(job) == 'table' and job.err == nil and job[1] == '0' then
        local ref = job[2]
        if not ref then
          local ok, spec = pcall(cjson.decode, redis.pcall('HGET', key, 'spec'))
          ref = ok and type(spec) == 'table' and type(spec.params) == 'table' and spec.params.ref_wav
        end
        if ref == ARGV[1] then return {id, job[3] or '0'} end
      end
    end
  end
end
return {}
"""

# KEYS: pending  → {the value it held, the count} when that was not the count, else an empty list.
# Run once a minute: a job whose record went while sections of it were waiting (evicted by a
# `maxmemory` policy, deleted by hand) held its share of `--max-queue` for good, and enough of them
# refused every submit.
RECOUNT = (
    WAITING
    + """
local count = count_waiting()
local held = '0'
local kind = redis.call('TYPE', KEYS[1]).ok
if kind == 'string' then held = redis.call('GET', KEYS[1]) elseif kind ~= 'none' then held = kind end
if held == string.format('%d', count) then return {} end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[1], count)
return {held, count}
"""
)

# KEYS: nodes; ARGV: node, the beat this process last sent for it, its `stopped` beat → 1 when marked.
# A node restarted under the same name (its state dir's `node-id`) while the old process drained has
# beaten since: the old one's stop wrote its own beat over the new one's, hidden until its next beat.
LEAVE = """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
"""
