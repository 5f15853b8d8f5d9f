import { localRepositoryPath, repositoryUrlProblem } from './repository-urls';
import { readableProblem } from './sandbox/sandbox-driver';

const ALLOW_LOCAL = { allowSsh: false, allowLocal: true, allowPrivateHosts: false };
const STRICT = { allowSsh: false, allowLocal: false, allowPrivateHosts: false };

describe('local repositories', () => {
  it('names the place and the setting when refused: the server, or this machine in local mode', () => {
    expect(repositoryUrlProblem('/srv/repo', STRICT)).toBe(
      "names a repository on the server itself (a path or file://), which this server does not allow: set repositories.allowLocal: true in the server's ASSAY_CONFIG, or use https://",
    );
    expect(repositoryUrlProblem('file:///home/me/repo', STRICT, 'local')).toBe(
      "names a repository on this machine (a path or file://), which this machine's ASSAY_CONFIG does not allow: set repositories.allowLocal: true in it, or use https://",
    );
    expect(repositoryUrlProblem('git@example.com:org/x.git', STRICT, 'local')).toBe(
      "uses ssh, which this machine's ASSAY_CONFIG does not allow: set repositories.allowSsh: true in it, or use https://",
    );
    expect(repositoryUrlProblem('/srv/repo', ALLOW_LOCAL)).toBeNull();
  });

  it('takes absolute paths and file:// URLs of this host; a relative path or another host is refused', () => {
    expect(localRepositoryPath('/home/me/repo/')).toEqual({ path: '/home/me/repo' });
    expect(localRepositoryPath('file:///home/me/my%20repo')).toEqual({ path: '/home/me/my repo' });
    expect(localRepositoryPath('file://localhost/home/me/repo')).toEqual({ path: '/home/me/repo' });
    expect(localRepositoryPath('file://elsewhere/home/me/repo')).toEqual({ refused: expect.stringContaining('a file:// URL of another host') });
    expect(localRepositoryPath('../repo')).toEqual({ refused: expect.stringContaining('is a relative path') });
    expect(repositoryUrlProblem('repo', ALLOW_LOCAL)).toMatch(/^is a relative path; give the repository's absolute path/);
  });

  it('is readable unless it holds or lies inside what trials never see; inside a home directory is fine', () => {
    const hidden = ['/var/lib/assay', '/tmp/assay-trials'];
    expect(readableProblem('/home/me/repo', hidden)).toBeNull();
    expect(readableProblem('/root/work/repo', hidden)).toBeNull();
    expect(readableProblem('/var/lib/assay/repo', hidden)).toBe('lies inside /var/lib/assay, which trials never see');
    expect(readableProblem('/var/lib', hidden)).toBe('holds /var/lib/assay, which trials never see');
    expect(readableProblem('/home', hidden)).toBe('holds /home, which trials never see');
    expect(readableProblem('/', hidden)).toMatch(/^holds \/\S+, which trials never see$/);
    expect(readableProblem('/tmp', hidden)).toBe('holds /tmp/assay-trials, which trials never see');
  });
});
