// The webhook delivery workflow's contract: its input, its activity's input and its workflow id.

/** One webhook message (Standard Webhooks): its id is the `webhook-id` every attempt sends. */
export interface WebhookDeliveryInput {
  messageId: string;
  projectId: string;
  type: string;
  /** The JSON body, exactly as signed and sent. */
  payload: string;
  /** The endpoints subscribed when the event happened. */
  endpointIds: string[];
}

export interface DeliverWebhookInput {
  messageId: string;
  endpointId: string;
  type: string;
  payload: string;
}

/** The workflow id of a message's delivery, so an event recorded twice is delivered once. */
export const webhookDeliveryWorkflowId = (messageId: string) => `webhook-${messageId}`;
