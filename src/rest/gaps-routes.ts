import { z } from 'zod';
import { jobToJson } from '../jobs/job';
import { restJobSource } from './job-source';
import { parseSince } from '../analytics/since';
import { idempotencyKey } from '../agent/validation';
import type { Deps } from '../deps';
import { parseInput } from '../validate';
import { projectOrigins } from '../edge/cors';
import { agentJobBody, documentedSchemas } from './response-schemas';
import { route, type Route } from './router';

const gapFixBody = z.strictObject({
  domain: z.string().max(253).optional().describe("The project's documentation domain, when the caller wants it checked"),
  since: z.string().max(40).optional().describe('A duration such as 7d (default) or an ISO date'),
  docsPath: z
    .string()
    .max(200)
    .regex(/^(?!\/)(?!.*(^|\/)\.\.(\/|$))[A-Za-z0-9._/-]+$/, 'must be a relative folder inside the repository')
    .optional()
    .describe('Where the docs are in the repository (default: its root)'),
  maxQuestions: z.number().int().min(1).max(50).optional(),
});

const gapFixResponse = z
  .object({
    job: agentJobBody,
    questions: z.array(z.object({ question: z.string(), count: z.number().int(), passages: z.array(z.object({ path: z.string(), title: z.string() })) })),
  })
  .register(documentedSchemas, { id: 'GapFix' });

/** `POST /v2/agent/{projectId}/gaps/fix`: the questions the docs failed become an agent job (docs/analytics.md). */
export function gapsRoutes(deps: Deps): Route[] {
  return [
    route({
      method: 'POST',
      path: '/v2/agent/{projectId}/gaps/fix',
      summary: 'Group the unanswered and down-rated questions and create an agent job that answers them in the docs',
      auth: 'admin',
      cors: projectOrigins(deps.tenancy, deps.config.corsOrigins),
      body: gapFixBody,
      responses: {
        201: { description: 'The job, and the questions it was given', json: gapFixResponse },
        200: { description: 'The job an earlier request with the same Idempotency-Key created', json: gapFixResponse },
      },
      handler: async (req) => {
        const projectId = req.params.projectId!;
        const header = req.headers['idempotency-key'];
        const key = header === undefined ? undefined : parseInput(idempotencyKey, Array.isArray(header) ? header[0] : header);
        const { job, created, questions, limitHeaders } = await deps.gaps.fix(req.caller, {
          projectId,
          idempotencyKey: key,
          domain: req.body.domain,
          since: parseSince(req.body.since),
          docsPath: req.body.docsPath,
          maxQuestions: req.body.maxQuestions,
        });
        return {
          status: created ? 201 : 200,
          headers: { location: `/v2/agent/${encodeURIComponent(projectId)}/job/${job._id}`, ...limitHeaders },
          body: {
            job: await restJobSource(deps)(jobToJson(job)),
            questions: questions.map((q) => ({ question: q.question, count: q.count, passages: q.passages.map((p) => ({ path: p.path, title: p.title })) })),
          },
        };
      },
    }),
  ];
}
