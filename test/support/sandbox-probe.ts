/**
 * A Python script run inside a trial's sandbox: which destinations it can connect to, and where
 * a secret can be read (every process's environment and command line, HOME, the workspace, /tmp
 * and /run). It prints `PROBES {"host:port": reachable}` and `KEY-FOUND [paths]`. The secret is
 * given in two halves (PROBE_NEEDLE_HEAD, PROBE_NEEDLE_TAIL), so that no file or environment of
 * the sandbox holds it whole because of the probe itself. With PROBE_GATEWAY_FROM naming a
 * variable that holds the gateway's URL, it also checks that the gateway answers, and then exits
 * 1 unless the gateway was reachable, nothing else was and the secret was nowhere.
 */
export const SANDBOX_PROBE = String.raw`
import json, os, socket, sys, urllib.parse
def reachable(host, port):
    probe = socket.socket(socket.AF_INET6 if ':' in host else socket.AF_INET)
    probe.settimeout(2)
    try:
        probe.connect((host, port))
        return True
    except OSError:
        return False
    finally:
        probe.close()
targets = [('127.0.0.1', int(port)) for port in os.environ['PROBE_PORTS'].split(',') if port]
targets += [(host, 80) for host in os.environ.get('PROBE_HOSTS', '').split(',') if host]
probes = {'%s:%d' % target: reachable(*target) for target in targets}
print('PROBES ' + json.dumps(probes))
needle = (os.environ['PROBE_NEEDLE_HEAD'] + os.environ['PROBE_NEEDLE_TAIL']).encode()
found = []
for pid in filter(str.isdigit, os.listdir('/proc')):
    for name in ('environ', 'cmdline'):
        try:
            if needle in open('/proc/%s/%s' % (pid, name), 'rb').read():
                found.append('/proc/%s/%s' % (pid, name))
        except OSError:
            pass
for top in {os.environ['HOME'], os.getcwd(), '/tmp', '/run', os.environ.get('TMPDIR', '/tmp')}:
    for directory, _, files in os.walk(top):
        for name in files:
            try:
                if needle in open(os.path.join(directory, name), 'rb').read():
                    found.append(os.path.join(directory, name))
            except OSError:
                pass
print('KEY-FOUND ' + json.dumps(found))
gateway_from = os.environ.get('PROBE_GATEWAY_FROM')
if gateway_from:
    port = urllib.parse.urlparse(os.environ.get(gateway_from, '')).port
    gateway = port is not None and reachable('127.0.0.1', port)
    print('GATEWAY ' + json.dumps(gateway))
    sys.exit(0 if gateway and not any(probes.values()) and not found else 1)
`;

/** The environment that tells the probe which secret to look for, in two halves. */
export function probeNeedle(secret: string): { PROBE_NEEDLE_HEAD: string; PROBE_NEEDLE_TAIL: string } {
  const half = Math.floor(secret.length / 2);
  return { PROBE_NEEDLE_HEAD: secret.slice(0, half), PROBE_NEEDLE_TAIL: secret.slice(half) };
}
