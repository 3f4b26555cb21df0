-- Argo CD health check for bench.benchrun.io/BenchmarkRun (resource.customizations.health.bench.benchrun.io_BenchmarkRun).
-- Healthy: the run Succeeded (its thresholds, if any, were met).
-- Degraded: the run Failed, including a failed verdict (phase Failed, reason ThresholdsNotMet).
-- Progressing: Pending, Queued (waiting for its load pool), Provisioning, Starting, Running, Collecting,
-- or a spec generation not picked up yet.
local hs = {}

local function condition(typ)
  if obj.status ~= nil and obj.status.conditions ~= nil then
    for _, c in ipairs(obj.status.conditions) do
      if c.type == typ then
        return c
      end
    end
  end
  return nil
end

if obj.status == nil or obj.status.phase == nil or obj.status.phase == "" then
  hs.status = "Progressing"
  hs.message = "Waiting for the benchrun operator to accept the run"
  return hs
end

local st = obj.status
if obj.metadata.generation ~= nil and (st.observedGeneration == nil or st.observedGeneration < obj.metadata.generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for generation " .. obj.metadata.generation .. " to be accepted"
  return hs
end

local done = condition("Succeeded")
local message = ""
if done ~= nil and done.message ~= nil then
  message = done.message
end

if st.phase == "Succeeded" then
  if st.verdict == "Failed" then
    hs.status = "Degraded"
    hs.message = "Verdict Failed: " .. message
    return hs
  end
  hs.status = "Healthy"
  if st.verdict == "Passed" then
    hs.message = "Thresholds met; " .. message
  else
    hs.message = message
  end
  return hs
end

if st.phase == "Failed" then
  hs.status = "Degraded"
  local reason = ""
  if done ~= nil and done.reason ~= nil then
    reason = done.reason .. ": "
  end
  hs.message = reason .. message
  return hs
end

hs.status = "Progressing"
hs.message = st.phase
local load = condition("LoadComplete")
if st.phase == "Running" and load ~= nil and load.message ~= nil then
  hs.message = "Running: " .. load.message
end
local queued = condition("Queued")
if st.phase == "Queued" and queued ~= nil and queued.status == "True" and queued.message ~= nil and queued.message ~= "" then
  hs.message = "Queued: " .. queued.message
end
return hs
