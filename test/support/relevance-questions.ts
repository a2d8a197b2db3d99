// Sets for the assistant's relevance floor (issue 15, "Honest answers"), about the npm docs in test/fixtures/docs/npm.
// Written before the floor was measured; the floor was chosen on them (docs/decisions/2026-11-23-relevance-floor.md).

/** Questions the npm docs answer, in users' words, about pages across the docs. */
export const onTopicQuestions: string[] = [
  'how do I install a package only for development?',
  'what does npm ci do differently from npm install?',
  'how can I publish a scoped package publicly?',
  'set a custom registry for one scope',
  'run a script before every publish',
  'what is a peer dependency?',
  'how do I log in to a private registry with a token?',
  'list globally installed packages',
  'update npm itself to the latest version',
  'how are semver ranges like ^1.2.0 interpreted?',
  'ignore files when publishing my package',
  'where does npm keep its cache?',
  'how do I add a binary command to my package?',
  'install a dependency straight from a GitHub repository',
  'how do I see the config values npm is using?',
  'make npm use a proxy server',
  'what happens when I run npm start without a start script?',
  'override the version of a transitive dependency',
  'check which licenses my dependencies use',
  'how do workspaces share dependencies?',
];

/**
 * Questions the npm docs do not answer: other topics altogether, and near misses about neighbouring tools that an
 * assistant must not answer with unrelated npm passages.
 */
export const offTopicQuestions: string[] = [
  'what is the capital of Australia?',
  'how do I bake sourdough bread?',
  'who won the football world cup in 2014?',
  'recommend a good laptop for gaming',
  'how many moons does Jupiter have?',
  'translate good morning into Japanese',
  'what is the best way to learn the guitar?',
  'how do I change a flat tyre on my bike?',
  'explain the theory of relativity simply',
  'write a poem about the sea',
  'what is the boiling point of water at altitude?',
  'how do I file my taxes?',
  'what are the symptoms of the flu?',
  'how do I configure a VLAN on a Cisco switch?',
  'create a pivot table in Excel',
  'how do I centre a div with CSS grid?',
  'what is the difference between TCP and UDP?',
  'how do I write a SQL join across three tables?',
  'how do I install Python packages with pip?',
  'configure a Kubernetes ingress with TLS',
  'how do I create a virtual environment in Python?',
  'set up a cron job on Linux',
  'how do I use Rust cargo workspaces?',
  'how does garbage collection work in Java?',
  'deploy a Django app to Heroku',
  'how do I resize an image in Photoshop?',
  'what is the weather tomorrow in Paris?',
  'how do I reset my Gmail password?',
  'what is a monad in Haskell?',
  'tips for a job interview',
];
