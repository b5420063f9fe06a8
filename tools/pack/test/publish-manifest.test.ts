import { expect } from 'chai';
import { conditionsOf, publishedSpecifier, publishManifest, PublishManifestError, publishProblems, targetsOf, type Manifest } from '../src/publish-manifest.js';

const versions: Record<string, string> = { '@svc/core': '0.1.0', '@svc/adapter-http': '0.2.0' };
const versionOf = (name: string): string => {
  const version = versions[name];
  if (version === undefined) throw new Error(`no ${name}`);
  return version;
};

/** A package.json as the repository keeps them. */
function repositoryManifest(overrides: Manifest = {}): Manifest {
  return {
    name: '@svc/adapter-queue',
    version: '0.1.0',
    type: 'module',
    exports: {
      '.': { source: './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' },
      './memory': { source: './src/memory.ts', types: './dist/memory.d.ts', default: './dist/memory.js' },
    },
    publishConfig: {
      access: 'public',
      exports: {
        '.': { types: './dist/index.d.ts', default: './dist/index.js' },
        './memory': { types: './dist/memory.d.ts', default: './dist/memory.js' },
      },
    },
    files: ['dist', 'src'],
    scripts: { prepack: 'node pack.js prepack', postpack: 'node pack.js postpack', test: 'mocha' },
    dependencies: { '@svc/core': 'workspace:*', bullmq: '6.7.0' },
    peerDependencies: { '@svc/adapter-http': 'workspace:^', typescript: '>=5.3' },
    devDependencies: { '@svc/adapter-http': 'workspace:~' },
    packageManager: 'pnpm@12.21.0',
    ...overrides,
  };
}

describe('publish manifest (what npm pack ships, as pnpm pack makes it)', function () {
  it('replaces workspace: specifiers by the version of the workspace package', function () {
    expect(publishedSpecifier('@svc/core', 'workspace:*', versionOf)).to.equal('0.1.0');
    expect(publishedSpecifier('@svc/core', 'workspace:', versionOf)).to.equal('0.1.0');
    expect(publishedSpecifier('@svc/core', 'workspace:^', versionOf)).to.equal('^0.1.0');
    expect(publishedSpecifier('@svc/core', 'workspace:~', versionOf)).to.equal('~0.1.0');
    expect(publishedSpecifier('@svc/core', 'workspace:^0.1.0', versionOf)).to.equal('^0.1.0');
    expect(publishedSpecifier('koa', '3.3.0', versionOf)).to.equal('3.3.0');
  });

  it('refuses the workspace: forms it does not rewrite (alias, path)', function () {
    expect(() => publishedSpecifier('@svc/core', 'workspace:@svc/other@*', versionOf)).to.throw(PublishManifestError, /alias or a path/u);
    expect(() => publishedSpecifier('@svc/core', 'workspace:../core', versionOf)).to.throw(PublishManifestError, /alias or a path/u);
  });

  it('gives exports from publishConfig (no source condition), real versions, and keeps npm configuration', function () {
    const original = repositoryManifest();
    const snapshot = structuredClone(original);
    const published = publishManifest(original, versionOf);
    expect(original, 'the input is not changed').to.deep.equal(snapshot);
    expect(published['exports']).to.deep.equal((snapshot['publishConfig'] as Manifest)['exports']);
    expect(conditionsOf(published['exports'])).to.deep.equal(new Set(['types', 'default']));
    expect(published['publishConfig']).to.deep.equal({ access: 'public' });
    expect(published['dependencies']).to.deep.equal({ '@svc/core': '0.1.0', bullmq: '6.7.0' });
    expect(published['peerDependencies']).to.deep.equal({ '@svc/adapter-http': '^0.2.0', typescript: '>=5.3' });
    expect(published['devDependencies']).to.deep.equal({ '@svc/adapter-http': '~0.2.0' });
    expect(published['scripts']).to.deep.equal({ test: 'mocha' });
    expect(published).to.not.have.property('packageManager');
    expect(publishProblems(published)).to.deep.equal([]);
  });

  it('drops publishConfig when only manifest fields were in it', function () {
    const published = publishManifest(repositoryManifest({ publishConfig: { exports: './dist/index.js', engines: { node: '>=20.19' } } }), versionOf);
    expect(published).to.not.have.property('publishConfig');
    expect(published['exports']).to.equal('./dist/index.js');
    expect(published['engines']).to.deep.equal({ node: '>=20.19' });
  });

  it('refuses a manifest whose exports would still name the source condition', function () {
    const manifest = repositoryManifest();
    delete manifest['publishConfig'];
    expect(() => publishManifest(manifest, versionOf)).to.throw(PublishManifestError, /"source" condition/u);
  });

  it('names what keeps a manifest from being published', function () {
    const problems = publishProblems(repositoryManifest());
    expect(problems).to.include('dependencies.@svc/core is "workspace:*"');
    expect(problems).to.include('peerDependencies.@svc/adapter-http is "workspace:^"');
    expect(problems.some((p) => p.includes('"source" condition'))).to.equal(true);
  });

  it('lists the conditions and the targets of an exports value', function () {
    const exportsValue = { '.': { node: { import: './a.js' }, default: ['./b.js', './c.js'] }, './x': './x.js' };
    expect(conditionsOf(exportsValue)).to.deep.equal(new Set(['node', 'import', 'default']));
    expect(targetsOf(exportsValue)).to.deep.equal(['./a.js', './b.js', './c.js', './x.js']);
  });
});
