"""The Lua scripts that change a shared job: each runs atomically inside Redis, so two nodes can never
interleave half of one change with half of another.

Why scripts: an event's `seq` must be its position in the job's log on every node, a section must be
`ok` exactly once even when two nodes ran it (a reclaimed section whose first owner was only slow),
and nothing may follow `done`. Each of those is a check and a write that must happen as one step.

Keys (all under the `npu:` prefix, `{id}` a job id): `job:{id}` hash (spec, total, seq, next, done, began, finished,
ok, fail, node), `log:{id}` stream (entry id `0-<seq>`, field `e` = the event JSON), `final:{id}`
hash idx → ok|fail, `wav:{id}:{idx}` the section's wav, `pending` the sections not yet final over
all jobs (the queue bound), `q:first` / `q:batch` the work streams, `ready:{node}` the accepting
node's files to write. (`pcm:{id}`, a streaming job's audio, is written with plain commands:
`pcm_stream.py`.)
"""

from __future__ import annotations

# A section's work item is (job, pos): pos is the section's position in the request; `next` counts
# the positions already queued (a job keeps a small window of sections in the queue, so jobs
# interleave section by section, as the local admission serves them).
# Once per section (`adv:<idx>`): a script retried after a dropped reply, or a section run twice,
# never skips a position.
# Redis's own clock, in seconds: the one clock every node shares (a node's own may be skewed, and a job
# is begun on one node and ended on another).
_CLOCK = """
local function clock()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
"""

# Every check and read a script needs comes before its first write: Redis does not roll a script back, so
# a call that fails halfway (a value planted by any local process: a log entry with a high id, a counter
# that is no number) would leave a job half-updated (`final` set but no event, `pending` never released).

# The next seq of a job's log, and whether the log can take it: past the highest id the stream ever had
# (an entry planted at `0-999` moves seq on past it, so the job still ends), or none when the log is not
# a stream of `0-<n>` ids (the event is then not logged; the job's counts and end still are).
SEQ_JUMP = 1_000_000  # more events than a job has (its sections are bounded), far below a seq's 15 digits

_RUN = """
local this_run = nil
local function run_id()
  if this_run == nil then  -- '' where INFO is refused (a renamed command): no jump, as before
    local info = redis.pcall('INFO', 'server')
    this_run = type(info) == 'string' and string.match(info, 'run_id:(%x+)') or ''
  end
  return this_run
end
"""

# After a restart of Redis (another run id than the job's last event was logged in), a job's seq jumps
# by SEQ_JUMP, and at least to Redis's clock in RESTART_TICKs: a Redis that crashed and loaded an older
# snapshot has forgotten its last events, whose seqs callers had read, and the events made again took
# those seqs (a stream open across it showed a section's `ok` twice and missed another's). The clock
# is what a crash loop needs: Redis loading one snapshot twice gave the same constant jump twice, and
# reused every seq of its first comeback; the clock has moved on by more ticks than that comeback logged
# events (each is a script run, longer than a tick). A graceful restart only makes the numbers larger.
RESTART_TICK = 0.00001  # 10 µs: now is 1.8e14 ticks, a seq of 15 digits until the year 5000
_SEQ = (
    _RUN
    + """
local function log_position(seq, log_key)
  local kind = redis.call('TYPE', log_key).ok
  if kind == 'none' then return seq, true end
  if kind ~= 'stream' then return seq, false end
  local info = redis.call('XINFO', 'STREAM', log_key)
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then
      local ms, n = string.match(info[i + 1], '^(%d+)-(%d+)$')
      if ms ~= '0' or #n > 15 then return seq, false end
      return math.max(seq, tonumber(n)), true
    end
  end
  return seq, false
end

local function next_seq(job_key, log_key)
  local seq = tonumber(redis.call('HGET', job_key, 'seq'))
  if seq == nil then error('npu: job ' .. job_key .. ' has no seq of ours') end
  local last, usable = log_position(seq, log_key)
  local run = redis.call('HGET', job_key, 'run')
  if run and run ~= run_id() then  -- Redis restarted since its last event
    local t = redis.call('TIME')
    local ticks = tonumber(t[1]) * TICKS_PER_SECOND + math.floor(tonumber(t[2]) / MICROS_PER_TICK)
    last = math.max(last + SEQ_JUMP, ticks)
  end
  return last + 1, usable
end

local function log_event(job_key, log_key, seq, usable, body)
  -- written as digits: Redis turns a Lua number of 15 digits into '1.8e+14'-like text
  redis.call('HSET', job_key, 'seq', string.format('%d', seq), 'run', run_id())
  if usable then redis.call('XADD', log_key, '0-' .. string.format('%d', seq), 'e', body) end
  return seq
end
""".replace("SEQ_JUMP", str(SEQ_JUMP))
    .replace("TICKS_PER_SECOND", str(round(1 / RESTART_TICK)))
    .replace("MICROS_PER_TICK", str(round(RESTART_TICK * 1_000_000)))
)

# The sections not yet final over all jobs (`pending`). A value not of ours there (a string that is no
# integer, a key of another type) is counted again from the jobs under way, and Redis's log says so:
# never a refused submit or a script that fails after its first write.
_WAITING = """
local function count_waiting()
  local count = 0
  for _, list in ipairs({'npu:jobs', 'npu:previews'}) do
    local ids = redis.pcall('ZRANGE', list, 0, -1)
    if type(ids) == 'table' and ids.err == nil then
      for _, id in ipairs(ids) do
        local job = redis.pcall('HMGET', 'npu:job:' .. id, 'done', 'total')
        if type(job) == 'table' and job[1] == '0' and tonumber(job[2]) then  -- under way
          local made = redis.pcall('HLEN', 'npu:final:' .. id)
          if type(made) == 'number' then count = count + math.max(0, tonumber(job[2]) - made) end
        end
      end
    end
  end
  return count
end

local function waiting(key)
  local kind = redis.call('TYPE', key).ok
  if kind == 'none' then return 0 end
  if kind == 'string' then
    local raw = redis.call('GET', key)
    if string.match(raw, '^-?%d+$') and #raw < 16 then return tonumber(raw) end
  end
  local count = count_waiting()
  redis.log(redis.LOG_WARNING, 'npu: ' .. key .. ' was not a count; recounted as ' .. count)
  redis.call('DEL', key)
  redis.call('SET', key, count)
  return count
end
"""

_ADVANCE = """
-- The job record's numbers and the batch stream, checked before a script's first write (see above).
local function check_job(job_key, batch_key)
  local job = redis.call('HMGET', job_key, 'total', 'seq', 'next', 'ok', 'fail', 'began')
  for i = 1, #job do
    if tonumber(job[i]) == nil then error('npu: job ' .. job_key .. ' is not a record of ours') end
  end
  local kind = redis.call('TYPE', batch_key).ok
  if kind ~= 'stream' and kind ~= 'none' then error('npu: ' .. batch_key .. ' is not a stream') end
  return tonumber(job[1])
end

local function advance(job_key, batch_key, job_id, idx)
  if redis.call('HSETNX', job_key, 'adv:' .. idx, 1) == 0 then return end
  local total = tonumber(redis.call('HGET', job_key, 'total'))
  local pos = redis.call('HINCRBY', job_key, 'next', 1) - 1
  if pos < total then redis.call('XADD', batch_key, '*', 'job', job_id, 'pos', pos) end
end
"""

# KEYS: job, log, pending, jobs, q_first, q_batch
# ARGV: id, spec, total, max_queue, window, start, now, node, carry (1: the first item carries the spec),
#   preview (1: a preview, listed in KEYS[4] = `previews` instead of `jobs`, and ended apart: `finish`),
#   ref (the reference wav it speaks with, '' for none: VOICE_USER reads it)
# `began` (Redis's clock) is what `done`'s elapsed_total_sec counts from.
CREATE = (
    _CLOCK
    + _RUN
    + _WAITING
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
    _SEQ
    + """
if redis.call('HGET', KEYS[1], 'done') ~= '0' then return 0 end
local seq, usable = next_seq(KEYS[1], KEYS[2])
return log_event(KEYS[1], KEYS[2], seq, usable, ARGV[1])
"""
)

# Seconds an ended preview's keys live at most: the accepting node's retention removes them 30 s after
# the end; this is for a node that never comes back (scaled down, its state dir lost).
PREVIEW_EXPIRY = 600

# The end time (`finished`, the score retention reads) and elapsed_total_sec are Redis's clock.
_DONE = (
    _CLOCK
    + _SEQ
    + """
local function expire_preview(job_key, log_key, final_key, previews_key, job_id, now)
  local expiry = PREVIEW_EXPIRY
  redis.call('ZADD', previews_key, now, job_id)
  redis.call('EXPIRE', previews_key, expiry)  -- refreshed by each preview's end: members go sooner
  redis.call('ZREM', 'npu:previews', job_id)  -- the index of previews under way
  for _, key in ipairs({job_key, log_key, final_key}) do redis.call('EXPIRE', key, expiry) end
  local ok, spec = pcall(cjson.decode, redis.call('HGET', job_key, 'spec'))
  if ok and type(spec) == 'table' and type(spec.sections) == 'table' then
    for _, section in ipairs(spec.sections) do
      if type(section) == 'table' and type(section.idx) == 'number' then
        redis.call('EXPIRE', 'npu:wav:' .. job_id .. ':' .. string.format('%d', section.idx), expiry)
      end
    end
  end
end

-- Called last, after the script's own event (if any): its reads were checked before that first write.
local function finish(job_key, log_key, final_key, finished_key, job_id, cancelled)
  local job = redis.call('HMGET', job_key, 'total', 'ok', 'fail', 'began')
  local now = clock()
  local elapsed = math.max(0, math.floor((now - tonumber(job[4] or now)) * 1000 + 0.5) / 1000)
  local body = cjson.encode({event='done', total=tonumber(job[1]), ok_count=tonumber(job[2]),
    fail_count=tonumber(job[3]), elapsed_total_sec=elapsed, cancelled=cancelled})
  local seq, usable = next_seq(job_key, log_key)
  log_event(job_key, log_key, seq, usable, body)
  redis.call('HSET', job_key, 'done', 1, 'finished', now)
  if redis.call('HGET', job_key, 'preview') == '1' then  -- not a job to keep: retention removes it soon
    expire_preview(job_key, log_key, final_key, finished_key .. ':previews', job_id, now)
  else
    redis.call('ZADD', finished_key, now, job_id)
  end
  return seq, body
end
""".replace("PREVIEW_EXPIRY", str(PREVIEW_EXPIRY))
)

# KEYS: job, log, final, pending, finished, q_batch
# ARGV: id, idx, event, kind (ok|fail), advance (1: also queue the job's next section)
# → {seq of the final event, or 0 when it was a duplicate (already final) or the job had ended;
#    the `done` it logged after it ('' when the job goes on)}.
FINAL = (
    _ADVANCE
    + _DONE
    + _WAITING
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

# KEYS: job, final, wav, ready, q_batch  ARGV: id, idx, wav, duration, elapsed, cached
# The engine node's half of `ok`: the audio is stored (one SET: never half a wav) and the accepting
# node is told to write its file and log `ok`; a section already final keeps its first audio.
MADE = (
    _ADVANCE
    + """
if redis.call('HGET', KEYS[1], 'done') ~= '0' then return 0 end
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then return 0 end
check_job(KEYS[1], KEYS[5])
local kind = redis.call('TYPE', KEYS[4]).ok
if kind ~= 'stream' and kind ~= 'none' then error('npu: ' .. KEYS[4] .. ' is not a stream') end
redis.call('SET', KEYS[3], ARGV[3])
redis.call('XADD', KEYS[4], '*', 'job', ARGV[1], 'idx', ARGV[2], 'duration', ARGV[4],
  'elapsed', ARGV[5], 'cached', ARGV[6])
advance(KEYS[1], KEYS[5], ARGV[1], ARGV[2])
return 1
"""
)

# KEYS: job, log, final, pending, finished, q_batch, wav  ARGV: id, idx, event (`ok`), wav
# A section with no file to write (a preview without `output_path`): the engine node stores the audio
# and logs `ok` itself in one step, as FINAL would after the writer's hop; still `ok` once per section.
# → as FINAL's.
MADE_OK = (
    _ADVANCE
    + _DONE
    + _WAITING
    + """
if redis.call('HGET', KEYS[1], 'done') ~= '0' then return {0, ''} end
if redis.call('HEXISTS', KEYS[3], ARGV[2]) == 1 then return {0, ''} end
local total = check_job(KEYS[1], KEYS[6])
local seq, usable = next_seq(KEYS[1], KEYS[2])
waiting(KEYS[4])
redis.call('HSET', KEYS[3], ARGV[2], 'ok')
redis.call('SET', KEYS[7], ARGV[4])
log_event(KEYS[1], KEYS[2], seq, usable, ARGV[3])
redis.call('DECR', KEYS[4])
redis.call('HINCRBY', KEYS[1], 'ok', 1)
advance(KEYS[1], KEYS[6], ARGV[1], ARGV[2])
local done = ''
if redis.call('HLEN', KEYS[3]) >= total then
  local _, body = finish(KEYS[1], KEYS[2], KEYS[3], KEYS[5], ARGV[1], false)
  done = body
end
return {seq, done}
"""
)

# KEYS: job, log, final, pending, finished  ARGV: id  → {seq of `done`, or 0 if it had ended; the `done`}
CANCEL = (
    _ADVANCE
    + _DONE
    + _WAITING
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
    _CLOCK
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
    _WAITING
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
