-- forge.install: finding the server to start and downloading it.
--
-- The server command is, in order: the `cmd` option of setup{}, the binary
-- that :ForgeInstall downloaded (install.dir), then `forge-lsp` on PATH.
-- :ForgeInstall fetches the release archive for this platform and the
-- release's checksums.txt, and installs the binary only when the archive's
-- SHA-256 matches.

local config = require("forge.config")

local M = {}

--- The last install: { status = "running" | "done" | "failed", message = ... }.
M.last = nil

--- platform returns the release's names for this machine's OS and CPU, or
--- nil and a message.
function M.platform()
  local u = vim.loop.os_uname()
  local os_names = { Linux = "linux", Darwin = "darwin", Windows_NT = "windows" }
  local arch_names = { x86_64 = "amd64", amd64 = "amd64", AMD64 = "amd64", aarch64 = "arm64", arm64 = "arm64", ARM64 = "arm64" }
  local os_name, arch = os_names[u.sysname], arch_names[u.machine]
  if not os_name or not arch then
    return nil, nil, string.format("no forge-lsp release for %s/%s; build it with go install github.com/forge-lsp/forge-lsp/cmd/forge-lsp@latest", u.sysname, u.machine)
  end
  return os_name, arch
end

--- archive_name is the release archive for a version and platform, as
--- .ci/dist.env names it.
function M.archive_name(version, os_name, arch)
  return string.format("forge-lsp_%s_%s_%s.%s", version, os_name, arch, os_name == "windows" and "zip" or "tar.gz")
end

local function exe_name()
  return vim.loop.os_uname().sysname == "Windows_NT" and "forge-lsp.exe" or "forge-lsp"
end

--- binary_path is where :ForgeInstall puts forge-lsp.
function M.binary_path()
  return config.values.install.dir .. "/" .. exe_name()
end

--- resolve returns the server command and where it came from: "option",
--- "downloaded" or "PATH".
function M.resolve()
  local cmd = config.values.cmd
  if type(cmd) == "table" and #cmd > 0 then
    return cmd, "option"
  end
  local bin = M.binary_path()
  if vim.fn.executable(bin) == 1 then
    return { bin, "serve" }, "downloaded"
  end
  return { "forge-lsp", "serve" }, "PATH"
end

--- checksum_for finds the archive's SHA-256 in a checksums.txt ("<hex>  <name>" lines).
function M.checksum_for(text, name)
  for line in text:gmatch("[^\r\n]+") do
    local sum, file = line:match("^(%x+)%s+%*?(%S+)%s*$")
    if sum and file == name then
      return sum:lower()
    end
  end
  return nil
end

--- sha256_cmd is the command that prints a file's SHA-256 on this machine.
local function sha256_cmd(path)
  if vim.fn.executable("sha256sum") == 1 then
    return { "sha256sum", path }
  elseif vim.fn.executable("shasum") == 1 then
    return { "shasum", "-a", "256", path }
  elseif vim.fn.executable("certutil") == 1 then
    return { "certutil", "-hashfile", path, "SHA256" }
  end
  return nil
end

-- job runs argv asynchronously and calls done(ok, stdout, stderr).
local function job(argv, done)
  local out, err = {}, {}
  local id = vim.fn.jobstart(argv, {
    stdout_buffered = true,
    stderr_buffered = true,
    on_stdout = function(_, data)
      out = data or {}
    end,
    on_stderr = function(_, data)
      err = data or {}
    end,
    on_exit = function(_, code)
      done(code == 0, table.concat(out, "\n"), vim.trim(table.concat(err, "\n")))
    end,
  })
  if id <= 0 then
    done(false, "", "could not start " .. argv[1])
  end
end

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local s = f:read("*a")
  f:close()
  return s
end

--- install downloads the release of `version` (default: install.version)
--- for this platform into install.dir. on_done(ok, message) is called when
--- it is over; M.last holds the same.
function M.install(version, on_done)
  local opts = config.values.install
  version = (version and version ~= "") and version:gsub("^v", "") or opts.version
  local function finish(ok, msg)
    M.last = { status = ok and "done" or "failed", message = msg, version = version }
    if on_done then
      on_done(ok, msg)
    end
  end
  M.last = { status = "running", version = version }
  local os_name, arch, problem = M.platform()
  if not os_name then
    return finish(false, problem)
  end
  if vim.fn.executable("curl") ~= 1 then
    return finish(false, "downloading needs curl on PATH; or put forge-lsp on PATH yourself and restart Neovim")
  end
  local name = M.archive_name(version, os_name, arch)
  local base = opts.base_url:gsub("/+$", "") .. "/v" .. version .. "/"
  local tmp = vim.fn.tempname()
  vim.fn.mkdir(tmp .. "/x", "p")
  local archive, sums = tmp .. "/" .. name, tmp .. "/checksums.txt"
  local function fail(msg)
    vim.fn.delete(tmp, "rf")
    finish(false, msg)
  end
  local function fetch(url, to, next_step)
    job({ "curl", "-fsSL", "--retry", "2", "-o", to, url }, function(ok, _, err)
      if not ok then
        return fail(string.format("downloading %s failed: %s", url, err ~= "" and err or "curl failed"))
      end
      next_step()
    end)
  end
  fetch(base .. "checksums.txt", sums, function()
    fetch(base .. name, archive, function()
      local want = M.checksum_for(read_file(sums) or "", name)
      if not want then
        return fail(string.format("%schecksums.txt has no line for %s; not installed", base, name))
      end
      local hash = sha256_cmd(archive)
      if not hash then
        return fail("no sha256sum, shasum or certutil to check the download with; not installed")
      end
      job(hash, function(ok, out, err)
        local got = ok and out:lower():match("(%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x%x)")
        if not got then
          return fail("computing the checksum failed: " .. err)
        end
        if got ~= want then
          return fail(string.format("checksum mismatch for %s: checksums.txt says %s, the download is %s; not installed", name, want, got))
        end
        job({ "tar", "-xf", archive, "-C", tmp .. "/x" }, function(unpacked, _, terr)
          local from = tmp .. "/x/" .. exe_name()
          if not unpacked or vim.fn.filereadable(from) ~= 1 then
            return fail(string.format("unpacking %s failed: %s", name, terr ~= "" and terr or ("no " .. exe_name() .. " inside")))
          end
          vim.fn.mkdir(opts.dir, "p")
          local to = M.binary_path()
          vim.fn.delete(to)
          if vim.fn.rename(from, to) ~= 0 then
            return fail("could not move forge-lsp to " .. to)
          end
          vim.fn.setfperm(to, "rwxr-xr-x")
          vim.fn.delete(tmp, "rf")
          job({ to, "version" }, function(runs, vout, verr)
            if not runs then
              vim.fn.delete(to)
              return finish(false, string.format("the downloaded forge-lsp does not run on this machine (%s); removed", verr))
            end
            finish(true, string.format("installed %s at %s", (vout:match("^[^\n]+") or "forge-lsp"), to))
          end)
        end)
      end)
    end)
  end)
end

return M
